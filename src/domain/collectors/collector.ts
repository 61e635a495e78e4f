/** How a result column is used: a label, a sample value of some type, or ignored. */
export type Usage = 'LABEL' | 'GAUGE' | 'COUNTER' | 'HISTOGRAM' | 'DISCARD';

/** All usages, in the order the docs list them. */
export const USAGES: readonly Usage[] = ['LABEL', 'GAUGE', 'COUNTER', 'HISTOGRAM', 'DISCARD'];

/** One declared result column of a collector. */
export interface MetricColumn {
  /** Column name in the query result. */
  readonly column: string;
  readonly usage: Usage;
  /** Replaces the column name in the metric (or label) name. */
  readonly rename?: string;
  readonly description?: string;
  /** Multiplier applied to every value (e.g. 0.001 for ms -> s). */
  readonly scale?: number;
  /** Value used when the column is NULL; without it a NULL leaves the sample out. */
  readonly default?: number;
  /** HISTOGRAM only: ascending upper bounds; the column holds cumulative counts per bound. */
  readonly bucket?: readonly number[];
  /** Base unit of the values (seconds, bytes...): the name ends with it (OpenMetrics UNIT). */
  readonly unit?: string;
  /** The name part used instead of `rename` under the legacy naming switch (names before the conventions). */
  readonly legacyRename?: string;
}

/**
 * How metric names are made: `conventions` (Prometheus naming: counters end in `_total`, the
 * unit ends the name) or `legacy` (`<name>_<column or rename>` as written, the names of older
 * releases, kept behind a compatibility switch).
 */
export type NamingMode = 'conventions' | 'legacy';

/** A query that must return true (first column of the first row) for its collector to run. */
export interface PredicateQuery {
  readonly name: string;
  readonly query: string;
  /** How long a predicate result is reused, in ms (0: evaluated on every run). */
  readonly ttlMs: number;
}

/** A validated collector definition with every default filled in. */
export interface CollectorDefinition {
  /** Top-level YAML key; unique in a configuration. */
  readonly key: string;
  /** Metric name prefix (defaults to the key). */
  readonly name: string;
  readonly desc: string;
  readonly query: string;
  readonly ttlMs: number;
  readonly timeoutMs: number;
  /** Inclusive lower bound on server_version_num; absent: open. */
  readonly minVersion?: number;
  /** Exclusive upper bound on server_version_num; absent: open. */
  readonly maxVersion?: number;
  readonly tags: readonly string[];
  readonly fatal: boolean;
  readonly skip: boolean;
  readonly predicateQueries: readonly PredicateQuery[];
  readonly metrics: readonly MetricColumn[];
  /** Where it was defined (file name), for messages. */
  readonly source: string;
}

/** Defaults applied when a definition leaves a field out. */
export const COLLECTOR_DEFAULTS = Object.freeze({ ttlMs: 10_000, timeoutMs: 1_000, predicateTtlMs: 10_000 });

/** The upper bound /explain prints for an open version range (no PostgreSQL version reaches it). */
export const OPEN_MAX_VERSION = 999999;

/** True when `version` (server_version_num) is inside the collector's [min, max) range. */
export function versionInRange(def: Pick<CollectorDefinition, 'minVersion' | 'maxVersion'>, version: number): boolean {
  return (def.minVersion === undefined || version >= def.minVersion) && (def.maxVersion === undefined || version < def.maxVersion);
}

function suffixed(name: string, suffix: string): string {
  return name.endsWith(`_${suffix}`) ? name : `${name}_${suffix}`;
}

/**
 * The family name of a value column without the counter suffix (OpenMetrics' family name):
 * `<name>_<rename or column>`, then `_<unit>` unless it already ends so. Legacy: `<name>_<legacy
 * rename, rename or column>` (a trailing `_total` of a counter taken off).
 */
export function familyBase(def: Pick<CollectorDefinition, 'name'>, col: MetricColumn, mode: NamingMode = 'conventions'): string {
  let name = `${def.name}_${(mode === 'legacy' ? col.legacyRename : undefined) ?? col.rename ?? col.column}`;
  if (col.usage === 'COUNTER' && name.endsWith('_total')) name = name.slice(0, -'_total'.length);
  if (mode === 'conventions' && col.unit) name = suffixed(name, col.unit);
  return name;
}

/**
 * The family name of a value column in the Prometheus text format (a counter's is its sample
 * name): the base plus `_total` for counters. Legacy: the name as written.
 */
export function familyName(def: Pick<CollectorDefinition, 'name'>, col: MetricColumn, mode: NamingMode = 'conventions'): string {
  if (col.usage !== 'COUNTER') return familyBase(def, col, mode);
  if (mode === 'legacy') return `${def.name}_${col.legacyRename ?? col.rename ?? col.column}`;
  return `${familyBase(def, col, mode)}_total`;
}

/** The label name of a LABEL column (its rename, else the column name). */
export function labelName(col: MetricColumn): string {
  return col.rename ?? col.column;
}

/** True for usages that produce samples. */
export function isValueUsage(u: Usage): boolean {
  return u === 'GAUGE' || u === 'COUNTER' || u === 'HISTOGRAM';
}
