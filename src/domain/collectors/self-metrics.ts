import { familyHeader, ownFamily, type ExpositionFormat, type FamilyMeta } from './exposition.js';
import { formatValue, renderLabelPairs } from './metric-naming.js';

/** Labels as ordered pairs. */
export type LabelPairs = readonly (readonly [string, string])[];

/** Version, branch and revision of the running exporter. */
export interface BuildInfo {
  readonly version: string;
  readonly branch: string;
  readonly revision: string;
}

/** The values behind db_up, db_version, db_in_recovery. */
export interface ServerGauges {
  readonly up: boolean;
  /** Last known server_version_num; null when never seen. */
  readonly version: number | null;
  /** null when unknown (server down). */
  readonly inRecovery: boolean | null;
}

/** Per-collector exporter statistics rendered as self metrics. */
export interface CollectorSelfStat {
  readonly name: string;
  /** null before the first run. */
  readonly lastDurationSeconds: number | null;
  readonly errors: number;
  readonly cacheHits: number;
  readonly lastMetrics: number;
}

/** Whole-scrape exporter statistics. */
export interface ScrapeSelfStats {
  readonly lastScrapeDurationSeconds: number;
  readonly scrapesTotal: number;
  /** Scrape requests answered (several share one run). */
  readonly scrapeRequestsTotal: number;
  readonly scrapeErrorsTotal: number;
  readonly lastScrapeTimestampSeconds: number;
  readonly collectors: readonly CollectorSelfStat[];
}

function sample(name: string, labels: string, value: number): string {
  return labels ? `${name}{${labels}} ${formatValue(value)}\n` : `${name} ${formatValue(value)}\n`;
}

function join(a: string, b: string): string {
  return a && b ? `${a},${b}` : a || b;
}

/** One family with a single sample: header and the sample line. */
function single(format: ExpositionFormat, m: FamilyMeta, labels: string, value: number): string {
  return familyHeader(m, format) + sample(m.name, labels, value);
}

/** The build-info family; constant for a process, so callers render it once per format. */
export function renderBuildInfo(ns: string, constLabels: LabelPairs, build: BuildInfo, format: ExpositionFormat = 'text'): string {
  const labels = join(renderLabelPairs([['version', build.version], ['branch', build.branch], ['revision', build.revision]]), renderLabelPairs(constLabels));
  return single(format, ownFamily(`${ns}_exporter_build_info`, 'Exporter build information, always 1', 'gauge'), labels, 1);
}

/** db_up, db_version (when known) and db_in_recovery (when up). */
export function renderServerGauges(ns: string, constLabels: LabelPairs, g: ServerGauges, format: ExpositionFormat = 'text'): string {
  const labels = renderLabelPairs(constLabels);
  let out = single(format, ownFamily(`${ns}_up`, 'Database server is up and accepting connections (1 or 0)', 'gauge'), labels, g.up ? 1 : 0);
  if (g.version !== null) out += single(format, ownFamily(`${ns}_version`, 'Server version as a number (server_version_num)', 'gauge'), labels, g.version);
  if (g.up && g.inRecovery !== null) out += single(format, ownFamily(`${ns}_in_recovery`, 'Server is in recovery mode (1 or 0)', 'gauge'), labels, g.inRecovery ? 1 : 0);
  return out;
}

/** The exporter's own metrics: whole scrapes, then one series per collector in each family. */
export function renderScrapeSelfStats(ns: string, constLabels: LabelPairs, s: ScrapeSelfStats, format: ExpositionFormat = 'text'): string {
  const labels = renderLabelPairs(constLabels);
  const p = `${ns}_exporter`;
  let out =
    single(format, ownFamily(`${p}_scrape_duration_seconds`, 'Duration of the last completed scrape run', 'gauge', 'seconds'), labels, s.lastScrapeDurationSeconds) +
    single(format, ownFamily(`${p}_scrape`, 'Scrape runs (concurrent requests share one run)', 'counter'), labels, s.scrapesTotal) +
    single(format, ownFamily(`${p}_scrape_requests`, 'Scrape requests answered (several may share one run)', 'counter'), labels, s.scrapeRequestsTotal) +
    single(format, ownFamily(`${p}_scrape_errors`, 'Scrape runs with the database down or a collector failing', 'counter'), labels, s.scrapeErrorsTotal) +
    single(format, ownFamily(`${p}_last_scrape_timestamp_seconds`, 'Unix time the last scrape run completed', 'gauge', 'seconds'), labels, s.lastScrapeTimestampSeconds);
  if (s.collectors.length === 0) return out;
  const per = s.collectors.map((c) => ({ c, l: join(`collector="${c.name}"`, labels) }));
  const families: [FamilyMeta, (c: CollectorSelfStat) => number][] = [
    [ownFamily(`${p}_query_duration_seconds`, 'Duration of the last run of each collector (all its databases)', 'gauge', 'seconds'), (c) => c.lastDurationSeconds ?? 0],
    [ownFamily(`${p}_query_errors`, 'Failed runs of each collector', 'counter'), (c) => c.errors],
    [ownFamily(`${p}_query_cache_hits`, 'Scrapes served from the TTL cache, per collector', 'counter'), (c) => c.cacheHits],
    [ownFamily(`${p}_query_metrics`, 'Samples emitted by the last run of each collector', 'gauge'), (c) => c.lastMetrics],
  ];
  for (const [m, value] of families) {
    out += familyHeader(m, format);
    for (const { c, l } of per) out += sample(m.name, l, value(c));
  }
  return out;
}
