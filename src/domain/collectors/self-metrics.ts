import { familyHeader } from './exposition.js';
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

/** The build-info family; constant for a process, so callers render it once. */
export function renderBuildInfo(ns: string, constLabels: LabelPairs, build: BuildInfo): string {
  const name = `${ns}_exporter_build_info`;
  const labels = join(renderLabelPairs([['version', build.version], ['branch', build.branch], ['revision', build.revision]]), renderLabelPairs(constLabels));
  return familyHeader(name, 'Exporter build information, always 1', 'gauge') + sample(name, labels, 1);
}

/** db_up, db_version (when known) and db_in_recovery (when up). */
export function renderServerGauges(ns: string, constLabels: LabelPairs, g: ServerGauges): string {
  const labels = renderLabelPairs(constLabels);
  let out = familyHeader(`${ns}_up`, 'Database server is up and accepting connections (1 or 0)', 'gauge') + sample(`${ns}_up`, labels, g.up ? 1 : 0);
  if (g.version !== null) out += familyHeader(`${ns}_version`, 'Server version as a number (server_version_num)', 'gauge') + sample(`${ns}_version`, labels, g.version);
  if (g.up && g.inRecovery !== null) {
    out += familyHeader(`${ns}_in_recovery`, 'Server is in recovery mode (1 or 0)', 'gauge') + sample(`${ns}_in_recovery`, labels, g.inRecovery ? 1 : 0);
  }
  return out;
}

/** The exporter's own metrics: whole scrapes, then one series per collector in each family. */
export function renderScrapeSelfStats(ns: string, constLabels: LabelPairs, s: ScrapeSelfStats): string {
  const labels = renderLabelPairs(constLabels);
  const p = `${ns}_exporter`;
  let out =
    familyHeader(`${p}_scrape_duration_seconds`, 'Duration of the last completed scrape run', 'gauge') +
    sample(`${p}_scrape_duration_seconds`, labels, s.lastScrapeDurationSeconds) +
    familyHeader(`${p}_scrape_total`, 'Scrape runs (concurrent requests share one run)', 'counter') +
    sample(`${p}_scrape_total`, labels, s.scrapesTotal) +
    familyHeader(`${p}_scrape_errors_total`, 'Scrape runs with the database down or a collector failing', 'counter') +
    sample(`${p}_scrape_errors_total`, labels, s.scrapeErrorsTotal) +
    familyHeader(`${p}_last_scrape_timestamp_seconds`, 'Unix time the last scrape run completed', 'gauge') +
    sample(`${p}_last_scrape_timestamp_seconds`, labels, s.lastScrapeTimestampSeconds);
  if (s.collectors.length === 0) return out;
  const per = s.collectors.map((c) => ({ c, l: join(`collector="${c.name}"`, labels) }));
  const families: [string, string, 'gauge' | 'counter', (c: CollectorSelfStat) => number][] = [
    ['query_duration_seconds', 'Duration of the last run of each collector (all its databases)', 'gauge', (c) => c.lastDurationSeconds ?? 0],
    ['query_errors_total', 'Failed runs of each collector', 'counter', (c) => c.errors],
    ['query_cache_hits_total', 'Scrapes served from the TTL cache, per collector', 'counter', (c) => c.cacheHits],
    ['query_metrics', 'Samples emitted by the last run of each collector', 'gauge', (c) => c.lastMetrics],
  ];
  for (const [suffix, help, type, value] of families) {
    out += familyHeader(`${p}_${suffix}`, help, type);
    for (const { c, l } of per) out += sample(`${p}_${suffix}`, l, value(c));
  }
  return out;
}
