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
  readonly host?: string;
  readonly port?: number;
  readonly primary_slot_name?: string;
  readonly restore_command?: string;
}

/** The dynamic (cluster-wide) configuration with every default filled in. */
export interface DynamicConfig {
  readonly ttl: number;
  readonly loop_wait: number;
  readonly retry_timeout: number;
  /** Bytes. */
  readonly maximum_lag_on_failover: number;
  readonly max_timelines_history: number;
  readonly primary_start_timeout: number;
  readonly primary_stop_timeout: number;
  readonly synchronous_mode: SynchronousMode;
  readonly synchronous_mode_strict: boolean;
  readonly synchronous_node_count: number;
  readonly failsafe_mode: boolean;
  readonly check_timeline: boolean;
  readonly pause: boolean;
  readonly db: {
    readonly use_pg_rewind: boolean;
    readonly use_slots: boolean;
    readonly parameters: Readonly<Record<string, ParameterValue>>;
  };
  readonly slots: Readonly<Record<string, PermanentSlot>>;
  readonly ignore_slots: readonly Readonly<Record<string, string>>[];
  readonly standby_cluster: StandbyClusterConfig | null;
}

/** Defaults of spec §2. */
export const DEFAULT_CONFIG: DynamicConfig = Object.freeze({
  ttl: 30,
  loop_wait: 10,
  retry_timeout: 10,
  maximum_lag_on_failover: 1048576,
  max_timelines_history: 0,
  primary_start_timeout: 300,
  primary_stop_timeout: 0,
  synchronous_mode: false,
  synchronous_mode_strict: false,
  synchronous_node_count: 1,
  failsafe_mode: false,
  check_timeline: false,
  pause: false,
  db: Object.freeze({ use_pg_rewind: true, use_slots: true, parameters: Object.freeze({}) }),
  slots: Object.freeze({}),
  ignore_slots: Object.freeze([]) as readonly Readonly<Record<string, string>>[],
  standby_cluster: null,
});

/** JSON as stored in the DCS `config` key: any subset of the settings. */
export type RawConfig = Readonly<Record<string, unknown>>;
