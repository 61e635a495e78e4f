import type { DatabaseState, ReplicationState } from './states.js';

/** One row of pg_stat_replication as the primary sees it. */
export interface ReplicationRow {
  readonly usename: string;
  readonly application_name: string;
  readonly client_addr: string | null;
  readonly state: string;
  readonly sync_state: string;
  readonly sync_priority: number;
  /** Positions confirmed by this standby (bytes), when known. */
  readonly write_lsn?: number | null;
  readonly flush_lsn?: number | null;
  readonly replay_lsn?: number | null;
}

/** One replication slot on this server (pg_replication_slots, temporary ones left out). */
export interface SlotFact {
  readonly name: string;
  readonly type: 'physical' | 'logical';
  /** Logical slots: their database and output plugin. */
  readonly database: string | null;
  readonly plugin: string | null;
  /** A walsender (or a logical decoding session) uses it now. */
  readonly active: boolean;
  /** Oldest WAL it keeps (bytes); null for a physical slot created without reserving WAL. */
  readonly restartLsn: number | null;
  /** Logical slots: what the consumer confirmed (bytes). */
  readonly confirmedFlushLsn: number | null;
  /** It holds back vacuum with an xmin (hot_standby_feedback of the standby that used it). */
  readonly hasXmin: boolean;
}

/** Old and new value of a parameter that waits for a restart. */
export interface PendingChange {
  readonly old_value: string;
  readonly new_value: string;
}

/**
 * What the agent observed about its own database server at one moment.
 * Byte positions are plain numbers (exact up to 2^53 bytes = 8 PiB of WAL).
 */
export interface LocalFacts {
  /** Process state of the server as tracked by the adapter. */
  readonly state: DatabaseState;
  /** The data directory holds an initialized cluster. */
  readonly initialized: boolean;
  /** The server accepts connections and answered the probe. */
  readonly running: boolean;
  /** pg_is_in_recovery(); null when not running. */
  readonly inRecovery: boolean | null;
  readonly systemIdentifier: string | null;
  readonly serverVersion: number | null;
  /** ISO 8601 with offset. */
  readonly postmasterStartTime: string | null;
  readonly timeline: number | null;
  /**
   * Timeline of the last checkpoint (a replica's last restartpoint) in the control file:
   * pg_rewind (PostgreSQL 15) takes its source's timeline from there. Absent where the adapter does not tell.
   */
  readonly checkpointTimeline?: number | null;
  /**
   * Stopped: the data was last a replica's (its control file says it shut down or stopped in
   * recovery, or it is set up to start as a standby). Absent where the adapter does not tell.
   */
  readonly stoppedAsReplica?: boolean;
  /**
   * The data is a new cluster's whose post_bootstrap script has not succeeded or whose
   * registration is not done: outside its bootstrap, that bootstrap was interrupted (the agent
   * or the machine stopped, the initialize write failed). Absent otherwise.
   */
  readonly bootstrapUnfinished?: boolean;
  /** Primary: current WAL flush position. */
  readonly walLocation: number | null;
  /** Replica: last received / replayed positions and replay time. */
  readonly receivedLocation: number | null;
  readonly replayedLocation: number | null;
  readonly replayedTimestamp: string | null;
  readonly replayPaused: boolean;
  /**
   * Why replay waits for a restart (a hot-standby setting below the primary's, which
   * PostgreSQL pauses on, and a promotion would abort on); null or absent when it does not.
   */
  readonly replayBlockedBy?: string | null;
  /**
   * Replica: the hot-standby minimums in its control file (the primary's max_connections and
   * kin, replayed) differ from those its configuration was written with; a configure writes
   * them, and a lowered value then shows as a pending restart. Absent where the adapter does not tell.
   */
  readonly standbyMinimumsChanged?: boolean;
  readonly replicationState: ReplicationState | null;
  /** Replica not streaming: the WAL receiver's last error, when the server said one; absent where the adapter does not tell. */
  readonly receiverError?: ReceiverError | null;
  /** Primary: connected standbys. */
  readonly replication: readonly ReplicationRow[];
  /** conn_url of the upstream this server is configured to follow; null when none. */
  readonly upstreamConnUrl: string | null;
  /** primary_slot_name this replica streams through (null: none); absent where the adapter does not tell. */
  readonly upstreamSlotName?: string | null;
  readonly pendingRestart: boolean;
  readonly pendingRestartReason: Readonly<Record<string, PendingChange>>;
  /** Current synchronous_standby_names on this server. */
  readonly synchronousStandbyNames: string;
  /** Replication slots on this server (empty when it does not run). */
  readonly slots: readonly SlotFact[];
}

/**
 * Why a replica's WAL receiver does not stream: it cannot connect to its upstream (a password,
 * pg_hba.conf, the network: a new copy of the data would not help), it cannot write the WAL it
 * receives to this node's pg_wal (`storage`: a full disk, a read-only file system, permissions;
 * a new copy would not help either), the WAL it needs is gone from the upstream, or something
 * else. `message` is the server's own words.
 */
export interface ReceiverError {
  readonly cause: 'connection' | 'storage' | 'wal_removed' | 'other';
  readonly message: string;
}

/** The most advanced WAL position this node holds (primary: flush; replica: max of received and replayed). */
export function walPosition(f: LocalFacts): number | null {
  if (f.inRecovery === false) return f.walLocation;
  const values = [f.receivedLocation, f.replayedLocation].filter((v): v is number => v !== null);
  return values.length ? Math.max(...values) : null;
}

/**
 * The postmaster runs but its server answers no probe (frozen, stalled on I/O): not a crash.
 * Its state is the last one known: `running`, or `stop_failed` when a stop could not take it
 * down (a dead postmaster reads `stopped`).
 */
export function serverSilent(facts: LocalFacts): boolean {
  return (facts.state === 'running' || facts.state === 'stop_failed') && !facts.running;
}

/** Facts of a server that is not running: what the adapter reports when nothing answers. */
export function stoppedFacts(state: DatabaseState, initialized: boolean): LocalFacts {
  return {
    state,
    initialized,
    running: false,
    inRecovery: null,
    systemIdentifier: null,
    serverVersion: null,
    postmasterStartTime: null,
    timeline: null,
    walLocation: null,
    receivedLocation: null,
    replayedLocation: null,
    replayedTimestamp: null,
    replayPaused: false,
    replicationState: null,
    replication: [],
    upstreamConnUrl: null,
    pendingRestart: false,
    pendingRestartReason: {},
    synchronousStandbyNames: '',
    slots: [],
  };
}
