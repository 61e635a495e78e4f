/** Runtime statistics of one collector (summed over its databases). */
export interface CollectorStat {
  readonly name: string;
  readonly runs: number;
  readonly cacheHits: number;
  readonly errors: number;
  /** Duration of the last run in seconds, null before the first run. */
  readonly lastDurationSeconds: number | null;
  /** Samples emitted by the last run. */
  readonly lastMetrics: number;
  readonly lastError: string | null;
}

const HEADERS = ['COLLECTOR', 'RUNS', 'CACHE_HITS', 'ERRORS', 'LAST_DURATION', 'METRICS', 'LAST_ERROR'];

function cells(s: CollectorStat): string[] {
  const duration = s.lastDurationSeconds === null ? '-' : `${(s.lastDurationSeconds * 1000).toFixed(2)}ms`;
  const error = s.lastError === null ? '-' : s.lastError.replace(/\s+/g, ' ').slice(0, 120);
  return [s.name, String(s.runs), String(s.cacheHits), String(s.errors), duration, String(s.lastMetrics), error];
}

/** The /stat plain-text table: a header row, then one aligned row per collector. */
export function statTable(stats: readonly CollectorStat[]): string {
  const rows = [HEADERS, ...stats.map(cells)];
  const widths = HEADERS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
}

/** The /stat?format=json document. */
export function statJson(stats: readonly CollectorStat[]): { collectors: CollectorStat[] } {
  return { collectors: stats.map((s) => ({ ...s })) };
}
