import { ValidationError, type Problem } from '../../errors.js';
import { describeValue, durationSeconds, dynamicConfigValidators, isLagValue, schemaProblems, syncNodeLagBytes, STANDBY_CLUSTER_KEYS } from './config-schema.js';
import { parameterProblem } from './server-parameters.js';
import { parseSize } from '../model/size.js';

export { DYNAMIC_CONFIG_SCHEMA, DYNAMIC_CONFIG_KEYS, FORBIDDEN_DYNAMIC_PARAMETERS } from './config-schema.js';

/** Synchronous replication policy: off, on (priority-based), or quorum-based. */
export type SynchronousMode = boolean | 'quorum';

/** A server parameter value as it may appear in YAML or JSON. */
export type ParameterValue = string | number | boolean;

/** A permanent replication slot kept on the primary. */
export interface PermanentSlot {
  readonly type: 'physical' | 'logical';
  readonly database?: string;
  readonly plugin?: string;
}

/** Settings of a standby cluster (replicates from a remote primary). */
export interface StandbyClusterConfig {
  /** The remote primary (or a proxy in front of it) the standby leader streams from. */
  readonly host?: string;
  /** Its port; 5432 when absent. */
  readonly port?: number;
  /** A slot on the remote primary the standby leader streams through. */
  readonly primary_slot_name?: string;
  /** Fetches WAL from an archive (every member of the standby cluster). */
  readonly restore_command?: string;
  /** Cleans the archive after restartpoints (every member of the standby cluster). */
  readonly archive_cleanup_command?: string;
  /** Delay the standby leader keeps behind the remote primary (ms or a duration such as '5min'). */
  readonly recovery_min_apply_delay?: number | string;
  /** How the first member (and a rebuilt standby leader) is created from the remote: `basebackup` or methods of the local files, in order. */
  readonly create_replica_methods?: readonly string[];
}

/** The dynamic (cluster-wide) configuration with every default filled in. */
export interface DynamicConfig {
  readonly ttl: number;
  readonly loop_wait: number;
  readonly retry_timeout: number;
  /** Bytes. */
  readonly maximum_lag_on_failover: number;
  /** Bytes a synchronous standby may lag behind the primary before another one replaces it; null: no limit. */
  readonly maximum_lag_on_syncnode: number | null;
  readonly max_timelines_history: number;
  readonly primary_start_timeout: number;
  readonly primary_stop_timeout: number;
  readonly synchronous_mode: SynchronousMode;
  readonly synchronous_mode_strict: boolean;
  readonly synchronous_node_count: number;
  readonly failsafe_mode: boolean;
  readonly check_timeline: boolean;
  readonly pause: boolean;
  /** Seconds a member tagged `preferred` must be healthy and caught up before the leader switches over to it. */
  readonly preferred_leader_delay: number;
  /** Seconds a member's physical replication slot outlives its member key (0: dropped with it). */
  readonly member_slots_ttl: number;
  readonly db: {
    readonly use_pg_rewind: boolean;
    readonly use_slots: boolean;
    /** Rebuild a data directory pg_rewind could not repair (default false: wait for the operator). */
    readonly remove_data_directory_on_rewind_failure: boolean;
    /** Rebuild a diverged data directory when pg_rewind may not be used (default false: wait for the operator). */
    readonly remove_data_directory_on_diverged_timelines: boolean;
    readonly parameters: Readonly<Record<string, ParameterValue>>;
  };
  readonly slots: Readonly<Record<string, PermanentSlot>>;
  readonly ignore_slots: readonly Readonly<Record<string, string>>[];
  readonly standby_cluster: StandbyClusterConfig | null;
}

/** Defaults of the dynamic configuration. */
export const DEFAULT_CONFIG: DynamicConfig = Object.freeze({
  ttl: 30,
  loop_wait: 10,
  retry_timeout: 10,
  maximum_lag_on_failover: 1048576,
  maximum_lag_on_syncnode: null,
  max_timelines_history: 0,
  primary_start_timeout: 300,
  primary_stop_timeout: 0,
  synchronous_mode: false,
  synchronous_mode_strict: false,
  synchronous_node_count: 1,
  failsafe_mode: false,
  check_timeline: false,
  pause: false,
  preferred_leader_delay: 60,
  member_slots_ttl: 1800,
  db: Object.freeze({
    use_pg_rewind: true,
    use_slots: true,
    remove_data_directory_on_rewind_failure: false,
    remove_data_directory_on_diverged_timelines: false,
    parameters: Object.freeze({}),
  }),
  slots: Object.freeze({}),
  ignore_slots: Object.freeze([]) as readonly Readonly<Record<string, string>>[],
  standby_cluster: null,
});

/** JSON as stored in the DCS `config` key: any subset of the settings. */
export type RawConfig = Readonly<Record<string, unknown>>;

/** True for a plain JSON object (not null, not an array). */
function isObject(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mergeValue(base: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergeValue(out[key], value);
  }
  return out;
}

/**
 * JSON merge patch (RFC 7396) of `PATCH /config`: objects merge recursively, a key set to
 * `null` is removed (back to its default), arrays and scalars replace whole. Returns a new
 * object; neither input is changed.
 */
export function mergePatch(base: RawConfig, patch: RawConfig): RawConfig {
  return mergeValue(base, patch) as RawConfig;
}

/**
 * Every problem of a dynamic configuration document: types, minimums, enums,
 * unknown keys, forbidden server parameters, and the cross-field rules
 * `loop_wait + 2*retry_timeout <= ttl` and "a standby cluster needs host or restore_command".
 * Empty when valid. Each problem says where, what was expected and what was found.
 */
export function validateConfig(raw: unknown): Problem[] {
  const problems = schemaProblems(raw);
  if (!isObject(raw)) return problems;
  const timing = (k: 'ttl' | 'loop_wait' | 'retry_timeout'): number | null => {
    if (raw[k] === undefined) return DEFAULT_CONFIG[k];
    return dynamicConfigValidators().key[k](raw[k]) ? (raw[k] as number) : null;
  };
  const [ttl, loopWait, retry] = [timing('ttl'), timing('loop_wait'), timing('retry_timeout')];
  if (ttl !== null && loopWait !== null && retry !== null && loopWait + 2 * retry > ttl) {
    problems.push({
      path: 'ttl',
      message: `expected loop_wait + 2*retry_timeout <= ttl, got ${loopWait} + 2*${retry} = ${loopWait + 2 * retry} > ttl ${ttl} (defaults count for absent keys)`,
    });
  }
  const db = raw['db'];
  if (isObject(db) && isObject(db['parameters'])) {
    for (const [name, value] of Object.entries(db['parameters'])) {
      const problem = value === null ? null : parameterProblem(name, value);
      if (problem !== null) problems.push({ path: `db.parameters.${name}`, message: problem });
    }
  }
  const sc = raw['standby_cluster'];
  if (isObject(sc) && dynamicConfigValidators().key.standby_cluster(sc) && sc['host'] === undefined && sc['restore_command'] === undefined) {
    problems.push({ path: 'standby_cluster', message: `expected host or restore_command (where to get WAL from), got ${describeValue(sc)}` });
  }
  if (isObject(sc) && sc['host'] === undefined) {
    for (const k of ['port', 'primary_slot_name']) {
      if (sc[k] !== undefined) problems.push({ path: `standby_cluster.${k}`, message: `expected standby_cluster.host to be set too (${k} belongs to the connection to the remote primary), got no host` });
    }
  }
  return problems;
}

/** Returns `raw` when it is a valid dynamic configuration; otherwise throws ValidationError code `invalid_config` listing every problem. */
export function validateConfigOrThrow(raw: unknown): RawConfig {
  const problems = validateConfig(raw);
  if (problems.length) throw new ValidationError(problems, 'invalid_config');
  return raw as RawConfig;
}

function pick<T>(value: unknown, valid: (v: unknown) => boolean, fallback: T): T {
  return value !== undefined && valid(value) ? (value as T) : fallback;
}

function validEntries<T>(value: unknown, valid: (key: string, v: unknown) => boolean): Readonly<Record<string, T>> {
  if (!isObject(value)) return Object.freeze({});
  return Object.freeze(Object.fromEntries(Object.entries(value).filter(([k, v]) => valid(k, v)).map(([k, v]) => [k, Object.freeze(v) as T])));
}

/**
 * The effective configuration: `raw` (the DCS `config` key) over DEFAULT_CONFIG. Never
 * throws: a missing or invalid value (or one invalid parameter or slot) falls back to its
 * default alone, so a bad write by hand cannot stop the HA loop. Sizes become bytes.
 * Cross-field rules are not enforced here; validateConfig refuses such documents at write time.
 */
export function resolveConfig(raw: RawConfig | null | undefined): DynamicConfig {
  const r: Readonly<Record<string, unknown>> = isObject(raw) ? raw : {};
  const validators = dynamicConfigValidators();
  const v = validators.key;
  const d = DEFAULT_CONFIG;
  const db = isObject(r['db']) ? r['db'] : {};
  const lag = r['maximum_lag_on_failover'];
  const sc = r['standby_cluster'];
  return Object.freeze({
    ttl: pick(r['ttl'], v.ttl, d.ttl),
    loop_wait: pick(r['loop_wait'], v.loop_wait, d.loop_wait),
    retry_timeout: pick(r['retry_timeout'], v.retry_timeout, d.retry_timeout),
    maximum_lag_on_failover: isLagValue(lag) ? (typeof lag === 'string' ? parseSize(lag) : (lag as number)) : d.maximum_lag_on_failover,
    maximum_lag_on_syncnode: syncNodeLagBytes(r['maximum_lag_on_syncnode']) ?? d.maximum_lag_on_syncnode,
    max_timelines_history: pick(r['max_timelines_history'], v.max_timelines_history, d.max_timelines_history),
    primary_start_timeout: pick(r['primary_start_timeout'], v.primary_start_timeout, d.primary_start_timeout),
    primary_stop_timeout: pick(r['primary_stop_timeout'], v.primary_stop_timeout, d.primary_stop_timeout),
    synchronous_mode: pick(r['synchronous_mode'], v.synchronous_mode, d.synchronous_mode),
    synchronous_mode_strict: pick(r['synchronous_mode_strict'], v.synchronous_mode_strict, d.synchronous_mode_strict),
    synchronous_node_count: pick(r['synchronous_node_count'], v.synchronous_node_count, d.synchronous_node_count),
    failsafe_mode: pick(r['failsafe_mode'], v.failsafe_mode, d.failsafe_mode),
    check_timeline: pick(r['check_timeline'], v.check_timeline, d.check_timeline),
    pause: pick(r['pause'], v.pause, d.pause),
    preferred_leader_delay: pick(r['preferred_leader_delay'], v.preferred_leader_delay, d.preferred_leader_delay),
    member_slots_ttl: durationSeconds(r['member_slots_ttl']) ?? d.member_slots_ttl,
    db: Object.freeze({
      use_pg_rewind: pick(db['use_pg_rewind'], validators.boolean, d.db.use_pg_rewind),
      use_slots: pick(db['use_slots'], validators.boolean, d.db.use_slots),
      remove_data_directory_on_rewind_failure: pick(db['remove_data_directory_on_rewind_failure'], validators.boolean, d.db.remove_data_directory_on_rewind_failure),
      remove_data_directory_on_diverged_timelines: pick(
        db['remove_data_directory_on_diverged_timelines'],
        validators.boolean,
        d.db.remove_data_directory_on_diverged_timelines,
      ),
      parameters: validEntries<ParameterValue>(db['parameters'], (k, p) => validators.parameterValue(p) && parameterProblem(k, p) === null),
    }),
    slots: validEntries<PermanentSlot>(r['slots'], (k, s) => /^[a-z0-9_]{1,63}$/.test(k) && validators.slot(s)),
    ignore_slots: Object.freeze(
      (Array.isArray(r['ignore_slots']) ? r['ignore_slots'] : []).filter((s) => validators.ignoredSlot(s)).map((s) => Object.freeze({ ...(s as Record<string, string>) })),
    ),
    standby_cluster: resolveStandbyCluster(sc),
  });
}

/**
 * The stored `standby_cluster`, tolerant the safe way: anything but absent or null keeps the
 * cluster a standby cluster, because reading a value written by hand as "no standby cluster"
 * would promote its standby leader beside the remote primary. Fields that are not valid are
 * left out; without a usable host or restore_command the standby leader stays in recovery
 * with nothing to replay until the value is mended.
 */
function resolveStandbyCluster(sc: unknown): StandbyClusterConfig | null {
  if (sc === undefined || sc === null) return null;
  if (!isObject(sc)) return Object.freeze({});
  const valid = dynamicConfigValidators().key.standby_cluster;
  return Object.freeze(Object.fromEntries(Object.entries(sc).filter(([k, value]) => STANDBY_CLUSTER_KEYS.has(k) && valid({ [k]: value }))) as StandbyClusterConfig);
}
