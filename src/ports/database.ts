import type { HistoryLine } from '../domain/cluster/model/cluster.js';
import type { ParameterValue } from '../domain/cluster/config/config.js';
import type { LocalServerConfig } from '../domain/cluster/config/local-server-config.js';
import type { LocalFacts } from '../domain/cluster/model/facts.js';
import type { SlotPlan } from '../domain/cluster/ha/decision.js';

/** How to stop the server: wait for clients, disconnect them, or abort without a checkpoint. */
export type StopMode = 'smart' | 'fast' | 'immediate';

/** The server to replicate from: a member's name and its conn_url (`postgres://host:port/postgres`). */
export interface Upstream {
  readonly name: string;
  readonly connUrl: string;
}

/** Options of a start. */
export interface StartOptions {
  /** Start as a replica of this upstream (standby.signal + primary_conninfo); null starts read-write (or as a replica with no upstream when `standby` is true). */
  readonly upstream: Upstream | null;
  /** Start in recovery even without an upstream (a demoted primary waiting for a leader). */
  readonly standby?: boolean;
  /** Replication slot to use on the upstream. */
  readonly slotName?: string;
  /** Give up waiting for connections after this many ms (the server keeps starting). */
  readonly timeoutMs: number;
}

/** How a replica is created. */
export interface CreateReplicaOptions {
  /** Replica creation methods to try in order (`basebackup` or methods of the local configuration); absent: the node's own list. */
  readonly methods?: readonly string[];
  /**
   * The operator asked for this node's data to be rebuilt (reinitialize, or the opt-in to
   * rebuild after a failed rewind): the database in the directory is replaced. A `keep_data`
   * method runs over it (a delta restore); any other starts from an empty directory.
   */
  readonly replacing?: boolean;
}

/** Options of a stop. */
export interface StopOptions {
  /**
   * A clean stop (fast or smart) resolves as soon as the shutdown checkpoint is written: the
   * server can take no write after it. Its processes finish exiting (the WAL senders hand the
   * last WAL over) before the next operation on the database runs.
   */
  readonly untilShutdownCheckpoint?: boolean;
  /**
   * Epoch ms by which the operator's `before_stop` script must have ended, or the stop goes
   * ahead without waiting for it any longer: a leader's lock runs out then, and its server
   * must be down before another member may promote. Absent: the script's own timeout alone.
   */
  readonly beforeStopUntil?: number;
}

/** Conditions of a promotion. */
export interface PromoteOptions {
  /**
   * Before asking the server to promote, wait (at most `catchUpMs`) until it holds WAL up to
   * this position: the old leader's shutdown checkpoint in a switchover. Past the wait the
   * promotion goes ahead.
   */
  readonly walAtLeast?: number;
  readonly catchUpMs?: number;
  /** Called once the server accepts writes, before promote() tidies up and returns (the caller can announce the new primary at once). Must not throw. */
  readonly onWritable?: () => void;
}

/** Options of a bootstrap's initdb. */
export interface InitdbOptions {
  /** Marks the new data unfinished (facts.bootstrapUnfinished) until clearBootstrapMark(): a post_bootstrap script has yet to succeed, and the cluster to be registered. */
  readonly unfinished?: boolean;
}

/**
 * The local PostgreSQL server. Long operations take an explicit timeout; failures throw a
 * `DatabaseError` whose code names the operation (`start_failed`, `promote_failed`, ...).
 */
export interface Database {
  /** Observes the server (state, role, WAL positions, pending restart...). At most ~2 s; never throws: a dead server gives a stopped/crashed fact set. */
  probe(): Promise<LocalFacts>;
  /**
   * Creates a new cluster in the empty data directory: initdb (options from bootstrap), or the
   * custom bootstrap method of the local configuration, which leaves a stopped server that
   * has finished its recovery. Throws DatabaseError('initdb_failed'), or
   * DatabaseError('data_dir_not_empty') when the directory holds what the agent did not make
   * (a database, somebody's files): then nothing was built there, and nothing may be removed.
   */
  initdb(opts?: InitdbOptions): Promise<void>;
  /** The new cluster is registered (its post_bootstrap script succeeded): the data is no longer marked unfinished. Throws DatabaseError('initdb_failed'). */
  clearBootstrapMark(): Promise<void>;
  /** Starts the server and waits until it accepts connections or `timeoutMs`. Throws DatabaseError('start_failed'). */
  start(opts: StartOptions): Promise<void>;
  /** Stops the server with `mode`, escalating to immediate after `timeoutMs` when given. Throws DatabaseError('stop_failed'). */
  stop(mode: StopMode, timeoutMs?: number, opts?: StopOptions): Promise<void>;
  /** Stops (fast) and starts with the current role. Throws DatabaseError('restart_failed'). */
  restart(timeoutMs: number): Promise<void>;
  /** Sends SIGHUP (pg_ctl reload). Throws DatabaseError('reload_failed'). */
  reload(): Promise<void>;
  /** Promotes a replica and waits until it accepts writes or `timeoutMs`. Throws DatabaseError('promote_failed'). */
  promote(timeoutMs: number, opts?: PromoteOptions): Promise<void>;
  /** The WAL position of a primary's shutdown checkpoint once it is written (its processes may still be exiting); null while it runs, or after any other stop. Never throws. */
  shutdownCheckpoint(): Promise<number | null>;
  /** Makes the server a replica of `upstream` (or a leaderless standby): writes standby.signal, primary_conninfo and slot, restarting only when needed. Throws DatabaseError('follow_failed'). */
  follow(upstream: Upstream | null, opts: { readonly slotName?: string; readonly timeoutMs: number }): Promise<void>;
  /** Runs pg_rewind against `source` on a stopped server. Throws DatabaseError('rewind_failed'). */
  rewind(source: Upstream): Promise<void>;
  /**
   * Creates a replica's data directory from `source` (null: only methods that need no running
   * source, such as a restore from a backup) with the replica creation methods in order,
   * falling back to the next when one fails. Cleans up on failure and throws
   * DatabaseError('create_replica_failed') saying why each method failed, or
   * DatabaseError('data_dir_not_empty') when, not `replacing`, the directory holds what the
   * agent did not make (nothing copied, nothing removed).
   */
  createReplica(source: Upstream | null, opts?: CreateReplicaOptions): Promise<void>;
  /** Deletes the data directory (the server must be stopped). Throws DatabaseError('remove_data_failed'). */
  removeDataDirectory(): Promise<void>;
  /** Runs CHECKPOINT (before a graceful demote). Throws DatabaseError('checkpoint_failed'). */
  checkpoint(): Promise<void>;
  /**
   * Writes the generated configuration from merged parameters and reloads a running server
   * when a file changed. `local`: the local file's settings from now on (a reload of it);
   * absent, those in force stay. Throws DatabaseError('configure_failed').
   */
  configure(parameters: Readonly<Record<string, ParameterValue>>, local?: LocalServerConfig): Promise<void>;
  /** Sets synchronous_standby_names and reloads. Throws DatabaseError('configure_failed'). */
  setSynchronousStandbyNames(value: string): Promise<void>;
  /**
   * Applies `plan` to the running server's replication slots: drops (an active one's walsender
   * is ended first), creations (physical ones reserve WAL at once; logical ones only on a
   * primary), advances (an inactive slot moved forward, never back). Every step is tried;
   * throws DatabaseError('slots_failed') listing the ones that failed.
   */
  syncSlots(plan: SlotPlan): Promise<void>;
  /**
   * On a replica: reads the state files of the logical slots `names` from `source` (the
   * primary, with the superuser's credentials), stops the server, puts them in place and
   * starts it again as it was (PostgreSQL loads slots only at start). Throws
   * DatabaseError('slots_failed').
   */
  copyLogicalSlots(source: Upstream, names: readonly string[], timeoutMs: number): Promise<void>;
  /** Terminates every client backend at once (fencing a demoted primary). Never throws. */
  terminateClientSessions(): Promise<void>;
  /** Timeline history from the history files: `[timeline, switch lsn, reason, null, null]`. Never throws: [] when unknown. */
  timelineHistory(): Promise<readonly HistoryLine[]>;
}
/** Inversify token of the Database port. */
export const Database = Symbol.for('warden.Database');
