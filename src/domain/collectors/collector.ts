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
}

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

/** The full metric family name of a value column: `<name>_<column or rename>`. */
export function familyName(def: Pick<CollectorDefinition, 'name'>, col: MetricColumn): string {
  return `${def.name}_${col.rename ?? col.column}`;
}

/** The label name of a LABEL column (its rename, else the column name). */
export function labelName(col: MetricColumn): string {
  return col.rename ?? col.column;
}

/** True for usages that produce samples. */
export function isValueUsage(u: Usage): boolean {
  return u === 'GAUGE' || u === 'COUNTER' || u === 'HISTOGRAM';
}
