import type { DatabaseErrorCode } from '../../errors.js';
import type { PositionConfirmation } from '../rules/position.js';
import type { Cluster, HistoryLine, ScheduledRestart, SyncPromotion } from '../model/cluster.js';
import type { DynamicConfig, ParameterValue, RawConfig } from '../config/config.js';
import type { LocalServerConfig } from '../config/local-server-config.js';
import type { LocalFacts } from '../model/facts.js';
import type { NodeSettings } from '../model/node.js';
import type { NodeStatus } from '../model/status.js';
import type { JobFailures } from './retry-backoff.js';

/** A server to replicate from: a member's name and its conn_url (mirrors the Database port's Upstream). */
export interface UpstreamRef {
  readonly name: string;
  readonly connUrl: string;
}

/** A replication slot to create: physical (WAL reserved at once), or logical with its database and plugin. */
export interface SlotSpec {
  readonly name: string;
  readonly type: 'physical' | 'logical';
  readonly database?: string;
  readonly plugin?: string;
}

/**
 * Changes to this server's replication slots, applied in order: drops, creations, then
 * advances (an inactive slot moved forward, never back: a physical slot's restart_lsn, a
 * logical slot's confirmed position). The Database port's syncSlots takes it as it is.
 */
export interface SlotPlan {
  readonly drop: readonly string[];
  readonly create: readonly SlotSpec[];
  readonly advance: readonly { readonly name: string; readonly lsn: number }[];
}

/** How a server is stopped (mirrors the Database port's StopMode). */
export type StopModeName = 'smart' | 'fast' | 'immediate';

/** Conditions of a restart (`POST /restart` and scheduled restarts). */
export interface RestartConditions {
  readonly restart_pending?: boolean;
  readonly role?: string;
  readonly db_version?: string;
  /** Seconds; overrides primary_start_timeout. */
  readonly timeout?: number;
}

/** Why the agent refused or failed a command an operator sent it. */
export type AgentCommandErrorCode =
  | 'action_in_progress'
  | 'not_allowed_on_leader'
  | 'no_leader'
  | 'restart_conditions_not_met'
  | 'not_possible_now'
  | 'condition_failed'
  | 'watchdog_failed'
  | 'initialize_failed'
  | 'action_failed'
  | 'pre_promote_failed'
  | 'post_bootstrap_failed'
  | DatabaseErrorCode;

/** Commands an API call left for the loop. `id` ties the outcome back to the waiting caller. */
export interface PendingCommands {
  readonly restart: { readonly id: number; readonly conditions: RestartConditions } | null;
  readonly reinitialize: { readonly id: number; readonly force: boolean; readonly fromLeader: boolean } | null;
}

/** No command waiting. */
export const NO_COMMANDS: PendingCommands = Object.freeze({ restart: null, reinitialize: null });

/** A database job the loop runs in the background; while it runs, decide() touches nothing on the database. */
export interface RunningJob {
  /** `promote`, `demote`, `restart`, `reinitialize`, `bootstrap`, `create replica`, `start`, `rewind`, `follow`, `stop`. */
  readonly name: string;
  /** epoch ms */
  readonly startedAt: number;
  /** The action the job is running now. */
  readonly step: string;
}

/** What the loop remembers between ticks (updated by `remember` actions and by the loop's own observations). */
export interface LoopMemory {
  /** Role the server had the last time it was seen running: tells a crashed primary from a crashed replica. */
  readonly lastRole: 'primary' | 'replica' | null;
  /** When this node began starting its crashed primary while holding the lock (primary_start_timeout). */
  readonly primaryStartAt: number | null;
  /** Canonical JSON of the parameters last given to configure(); null before the first. */
  readonly appliedParameters: string | null;
  /**
   * On the leader: since when (epoch ms) each member slot it retains has had no member key
   * (member_slots_ttl runs from then); null once expired, while the status key still lists it.
   */
  readonly departedSlots: Readonly<Record<string, number | null>>;
  /** The slot changes keep failing (the same backoff as a failing job, under the name `slots`); null after they succeed. */
  readonly slotsFailure: JobFailures | null;
  /** synchronous_standby_names last set by this node, with the primary's WAL position right after. */
  readonly ssn: { readonly value: string; readonly lsn: number } | null;
  /** This node's scheduled restart (also published in its member key). */
  readonly scheduledRestart: ScheduledRestart | null;
  /** A forced reinitialize waiting for the running job to end. */
  readonly reinitializeQueued: { readonly fromLeader: boolean } | null;
  /** A rewind failed on this timeline: reinitialize instead of trying again. */
  readonly rewindFailedOnTimeline: number | null;
  /** Where this node's WAL was when pg_rewind last succeeded on it: a server still there needs no other rewind (pg_rewind found nothing to do). */
  readonly rewoundAt?: { readonly timeline: number; readonly position: number } | null;
  /** The empty `initialize` key (a bootstrap in progress) with the time it was first seen, to clean up after a dead bootstrapper. */
  readonly initializeSeen: { readonly revision: string; readonly since: number } | null;
  /** Since when this agent sees no initialize key at all (null: it sees one, or the DCS was not read); absent in older memories. */
  readonly noInitializeSince?: number | null;
  /**
   * Highest timeline the local data was seen on (per system identifier): a replica's
   * probe may report an older one while its WAL receiver restarts, and a stopped server's
   * control file only knows its last checkpoint's.
   */
  readonly timelineSeen: { readonly systemIdentifier: string; readonly timeline: number } | null;
  /**
   * Since when this running replica has neither streamed from `upstream` (its configured
   * conn_url) nor moved on from WAL position `position` (replaying a local backlog is progress).
   */
  readonly notStreamingSince: { readonly since: number; readonly upstream: string | null; readonly position: number | null } | null;
  /** Consecutive failed starts as a replica: repeated failures escalate to a rewind, then a reinitialize. */
  readonly startFailures: number;
  /**
   * After this node's promotion: false until the CHECKPOINT that puts the new timeline into
   * the control file is done (pg_rewind reads it from there), then true; null otherwise.
   */
  readonly checkpointAfterPromote: boolean | null;
  /** This replica streamed from the current leader on its timeline: its WAL is a prefix of the leader's (see confirmPosition). */
  readonly positionConfirmed: PositionConfirmation | null;
  /** The last timeline this data ran as a primary on (kept across a demotion): such a node's WAL may go past the new leader's branch point. */
  readonly primaryOnTimeline: number | null;
  /**
   * Background jobs failing in a row, one entry per job, the latest failure last (repeated
   * failures back off, see withBackoff). A job's entry goes when it succeeds, not when another
   * job runs: two jobs that fail by turns (start, rewind, start...) keep their counts.
   */
  readonly jobFailures: readonly JobFailures[];
  /** Since when this node, in a leaderless cluster, has left the race to the candidate of the failover key at `revision`. */
  readonly candidateWait: { readonly revision: string | null; readonly since: number } | null;
  /**
   * When this standby leader last asked for a restartpoint (epoch ms): its control file must
   * show the timeline it follows before its replicas can rewind from it, and a standby can
   * only restart at a checkpoint record the remote has written on that timeline.
   */
  readonly restartpointAt?: number | null;
  /**
   * On a primary in synchronous mode: each streaming standby's confirmed position, and since
   * when it has stood still behind ours (null: not behind). Absent or null outside sync mode.
   */
  readonly standbyProgress?: Readonly<Record<string, StandbyProgress>> | null;
  /** When this replica last restarted on its own because replay waited for a restart (epoch ms); absent or null when never. */
  readonly replayRestartAt?: number | null;
  /** Since when this node, in a leaderless cluster, has left the race to `member`, ahead at `position` by its member key though its REST API does not answer (see the leader race). */
  readonly silentAheadWait?: { readonly member: string; readonly position: number; readonly since: number } | null;
  /**
   * Since when this switchover candidate, streaming from a member ahead to catch up (failover
   * key at `revision`), has stood at WAL position `wal`; `at`: the last tick it looked.
   */
  readonly candidateCatchUp?: { readonly revision: string; readonly wal: number; readonly since: number; readonly at: number } | null;
}

/** A standby's confirmed WAL position as the primary last saw it, and since when (epoch ms) it has stood still behind the primary's; null when it was not behind. */
export interface StandbyProgress {
  readonly position: number;
  readonly behindSince: number | null;
}

/** Memory of a freshly started agent. */
export const EMPTY_MEMORY: LoopMemory = Object.freeze({
  lastRole: null,
  primaryStartAt: null,
  appliedParameters: null,
  departedSlots: Object.freeze({}),
  slotsFailure: null,
  ssn: null,
  scheduledRestart: null,
  reinitializeQueued: null,
  rewindFailedOnTimeline: null,
  initializeSeen: null,
  noInitializeSince: null,
  timelineSeen: null,
  notStreamingSince: null,
  startFailures: 0,
  checkpointAfterPromote: null,
  positionConfirmed: null,
  primaryOnTimeline: null,
  jobFailures: [],
  candidateWait: null,
  restartpointAt: null,
});

/** Local settings decide() needs besides NodeSettings. */
export interface LocalOptions {
  /** `bootstrap.dcs`: the dynamic configuration the bootstrap winner writes. */
  readonly bootstrapDcs: RawConfig;
  /** `db.parameters` of the local file (win over the dynamic ones). */
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  /** `db.pg_hba` and `db.pg_ident` of the local file; absent: the database's own stay (no file of the node's). */
  readonly access?: Pick<LocalServerConfig, 'hba' | 'ident'>;
  /** `watchdog.safety_margin` seconds: the device fires this long before the leader key would expire. */
  readonly watchdogSafetyMargin: number;
  /** `db.recovery_conf` of the local file: recovery settings (restore_command...) of this node while it runs as a replica. */
  readonly recoveryConf?: Readonly<Record<string, ParameterValue>>;
  /** `db.pre_promote` is set: every promotion runs that fencing script first, and goes ahead only when it succeeds. */
  readonly prePromote?: boolean;
  /** `bootstrap.post_bootstrap` is set: a bootstrap runs that script on its new primary and registers the cluster only when it succeeds. */
  readonly postBootstrap?: boolean;
  /** A method of `db.create_replica_methods` needs no running server (`no_leader`): an empty node of a leaderless cluster restores a backup instead of waiting. */
  readonly replicaWithoutLeader?: boolean;
}

/** A failsafe ping this node confirmed: the primary that sent it, when, and the ttl (ms) its lock was extended by. */
export interface FailsafeConfirmation {
  readonly name: string;
  readonly at: number;
  readonly ttlMs: number;
}

/**
 * Until when a primary this node confirmed in failsafe mode may still write: its round started
 * before the confirmation and extended its lock by the ttl of then, or of now if that is longer.
 * Turning failsafe mode off, or a shorter ttl, does not shorten a lock already extended.
 */
export function confirmedFailsafeUntil(confirmed: FailsafeConfirmation, ttlSeconds: number): number {
  return confirmed.at + Math.max(confirmed.ttlMs, ttlSeconds * 1000);
}

/**
 * Whether a confirmation given to a primary in failsafe mode still binds this node, now that a
 * read of the store begun at `readAt` shows `leader` holding the leader key. A member confirms
 * only while it sees that primary's key, and a read begun after the confirmation sees at least
 * what the reads before it saw: another holder took the key after that primary. No member takes
 * the key while a primary's failsafe lock may run (every member it listed confirmed its last
 * round and waits that lock out, an unlisted one waits for every listed member to answer), so
 * that lock has ended and the confirmation binds no later race (a switchover after an etcd
 * outage waited out the ttl of a round long past when its new candidate died). A read begun
 * before the confirmation proves nothing: it may have been served before that primary's key.
 */
export function failsafeConfirmationStands(confirmed: FailsafeConfirmation, seen: { readonly leader: string | null; readonly readAt: number | null }): boolean {
  if (seen.readAt === null || seen.readAt <= confirmed.at) return true;
  return seen.leader === null || seen.leader === confirmed.name;
}

/** What the watchdog looks like this tick. */
export interface WatchdogView {
  readonly active: boolean;
  /** Last known result of isUsable() (or of activate()). */
  readonly usable: boolean;
}

/** Everything one HA tick decides from. Plain data: decide() does no I/O. */
export interface TickInput {
  /** epoch ms */
  readonly now: number;
  readonly node: NodeSettings;
  readonly local: LocalOptions;
  readonly config: DynamicConfig;
  /** The last successful DCS view (fresh when dcsReachable). */
  readonly cluster: Cluster;
  /** The DCS read of this tick succeeded. */
  readonly dcsReachable: boolean;
  readonly facts: LocalFacts;
  /** Our own leader-lock deadline (start of the last successful acquire/refresh + ttl); null when not held. */
  readonly lockDeadline: number | null;
  /**
   * Since when (epoch ms) every renewal of our leader lock failed with an error (not a lost
   * key); null or absent while they succeed. Failing for retry_timeout, the DCS is as good as
   * gone for the leader.
   */
  readonly lockRenewalFailingSince?: number | null;
  /** A promotion (or a start as primary) failed or timed out and may still complete inside PostgreSQL: the server may become writable any moment. */
  readonly promotionMayComplete?: boolean;
  /** Other members' /node documents (null = unreachable), gathered on request; null when not gathered this tick. */
  readonly peers: ReadonlyMap<string, NodeStatus | null> | null;
  /** Result of the failsafe round (every failsafe member accepted our POST /failsafe), gathered on request. */
  readonly failsafeConfirmed: boolean | null;
  /** The primary whose failsafe ping this node last confirmed, when (epoch ms), and the ttl then (ms): it may write until confirmedFailsafeUntil. */
  readonly failsafeConfirmedOther?: FailsafeConfirmation | null;
  readonly watchdog: WatchdogView;
  /** The background database job in progress, if any. */
  readonly job: RunningJob | null;
  readonly commands: PendingCommands;
  readonly memory: LoopMemory;
}

/** Every action decide() can ask for. The runner applies them in order and stops at the first failure. */
export type Action =
  // ---- DCS
  | { readonly type: 'acquireLeader' }
  | { readonly type: 'refreshLeader' }
  | { readonly type: 'releaseLeader' }
  /** Stop believing we hold the lock (a demotion without access to the key). */
  | { readonly type: 'forgetLock' }
  /**
   * Atomic create of the initialize key (`''` while bootstrapping, else a system identifier); fails when it exists.
   * With `replacing`, an atomic put in place of the abandoned empty claim of that revision instead.
   */
  | { readonly type: 'createInitialize'; readonly value: string; readonly replacing?: string }
  /** Writes the new cluster's system identifier (read from the database) into the initialize key. */
  | { readonly type: 'writeInitialize' }
  /**
   * Drops the empty initialize key of that revision; null: the claim this decision's own
   * createInitialize made (nothing when it made none), never one another member made since.
   */
  | { readonly type: 'deleteInitialize'; readonly revision: string | null }
  /** Creates the config key when absent. */
  | { readonly type: 'writeConfig'; readonly value: RawConfig }
  /** Appends the promotion to the history key; the runner takes the switch LSN from the server's history files when it can. */
  | {
      readonly type: 'recordPromotion';
      readonly previous: readonly HistoryLine[];
      readonly timeline: number | null;
      readonly lsn: number | null;
      readonly at: string;
      readonly leader: string;
      readonly maxLines: number;
    }
  | { readonly type: 'writeStatus'; readonly optime: number; readonly slots: Readonly<Record<string, number>>; readonly retainSlots?: readonly string[] }
  /**
   * A standby leader publishes the timeline history its server fetched from the remote
   * (its history files), keeping the dates and leaders of `previous` lines that match, so
   * its replicas can tell whether they diverged from it.
   */
  | { readonly type: 'syncHistory'; readonly previous: readonly HistoryLine[]; readonly maxLines: number }
  /**
   * After a clean shutdown of this primary: its shutdown checkpoint's position as the leader's
   * last optime (the status key), for the candidate to check it holds everything. Best effort:
   * a failure is logged and the sequence goes on.
   */
  | { readonly type: 'writeFinalPosition' }
  /** Compare-and-set of the sync key on `ifRevision` (`'0'`: must be absent). */
  | {
      readonly type: 'writeSync';
      readonly leader: string;
      readonly syncStandby: readonly string[];
      readonly quorum: number;
      /** Before a promotion: the key replaced (see SyncState.promoting). */
      readonly promoting?: SyncPromotion;
      readonly ifRevision: string;
    }
  | { readonly type: 'deleteSync' }
  | { readonly type: 'writeFailsafe'; readonly members: Readonly<Record<string, string>> }
  /** Writes `{}` to the failover key when its revision is still `revision`. */
  | { readonly type: 'clearFailover'; readonly revision: string; readonly reason: string }
  // ---- database (the long ones run as a background job)
  /** Creates the new cluster's data; `unfinished`: marked as such until its post_bootstrap script succeeded and the cluster is registered (clearBootstrapMark). */
  | { readonly type: 'initdb'; readonly unfinished?: true }
  | { readonly type: 'start'; readonly upstream: UpstreamRef | null; readonly standby: boolean; readonly slotName?: string; readonly timeoutMs: number }
  /** `untilShutdownCheckpoint`: done once the shutdown checkpoint is written (see the Database port's stop options). */
  | { readonly type: 'stop'; readonly mode: StopModeName; readonly timeoutMs?: number; readonly untilShutdownCheckpoint?: boolean }
  | { readonly type: 'restart'; readonly timeoutMs: number }
  /** With `walAtLeast`: first wait (at most `catchUpMs`) until the server holds WAL up to there (the old leader's last position in a switchover). */
  | { readonly type: 'promote'; readonly timeoutMs: number; readonly walAtLeast?: number; readonly catchUpMs?: number }
  /** Runs the operator's `pre_promote` script and waits for it; fails (`pre_promote_failed`) unless it succeeds. */
  | { readonly type: 'prePromote' }
  /** Runs the operator's `post_bootstrap` script on the new primary and waits for it; fails (`post_bootstrap_failed`) unless it succeeds. */
  | { readonly type: 'postBootstrap' }
  /** The new cluster is registered: its data is no longer marked unfinished (see initdb's `unfinished`). */
  | { readonly type: 'clearBootstrapMark' }
  | { readonly type: 'follow'; readonly upstream: UpstreamRef | null; readonly slotName?: string; readonly timeoutMs: number }
  | { readonly type: 'rewind'; readonly source: UpstreamRef }
  /**
   * Creates the data directory from `source` (null: with methods that need no running
   * server) by `methods` in order (absent: the node's own create_replica_methods).
   */
  /** `replacing`: the node's own database is rebuilt on request (see CreateReplicaOptions.replacing); otherwise the directory holds none. */
  | { readonly type: 'createReplica'; readonly source: UpstreamRef | null; readonly methods?: readonly string[]; readonly replacing?: true }
  | { readonly type: 'removeData' }
  | { readonly type: 'checkpoint' }
  | { readonly type: 'configure'; readonly parameters: Readonly<Record<string, ParameterValue>>; readonly key: string; readonly local?: LocalServerConfig }
  /** Sets synchronous_standby_names; the runner remembers it with the WAL position right after. */
  | { readonly type: 'setSynchronousStandbyNames'; readonly value: string }
  | { readonly type: 'syncSlots'; readonly plan: SlotPlan }
  /** On a replica: copies the leader's logical slots `names` (their state files), restarting the server to load them. */
  | { readonly type: 'copyLogicalSlots'; readonly source: UpstreamRef; readonly names: readonly string[]; readonly timeoutMs: number }
  | { readonly type: 'terminateSessions' }
  // ---- watchdog
  /** Arms the watchdog; with `required`, a failure stops the sequence. */
  | { readonly type: 'armWatchdog'; readonly timeoutSeconds: number; readonly required: boolean }
  /** Kicks the watchdog; with `required`, a failure stops the sequence. */
  | { readonly type: 'kickWatchdog'; readonly required: boolean }
  | { readonly type: 'disarmWatchdog' }
  // ---- loop state
  | { readonly type: 'remember'; readonly patch: Partial<LoopMemory> }
  /** Answers a waiting API command (a failure before it answers it with that failure instead). */
  | { readonly type: 'resolveCommand'; readonly id: number; readonly ok: boolean; readonly error?: AgentCommandErrorCode; readonly message: string }
  /** The failsafe round succeeded: hold the lock for another ttl from the round's start. */
  | { readonly type: 'extendLockByFailsafe' };

/** Name of an action type. */
export type ActionType = Action['type'];

/** Database actions that may take long: from the first of them on, a sequence runs as a background job. */
export const LONG_ACTIONS: ReadonlySet<ActionType> = new Set<ActionType>([
  'initdb',
  'start',
  'stop',
  'restart',
  'promote',
  'prePromote',
  'postBootstrap',
  'follow',
  'rewind',
  'createReplica',
  'removeData',
  'checkpoint',
  'copyLogicalSlots',
]);

/** What the loop must gather before decide() can answer: peers' /node documents, or a failsafe round. */
export type DecisionNeed = 'peers' | 'failsafe';

/** Flags for the published status that only the decision knows. */
export interface PublishHints {
  /** The failsafe round kept this primary running without the DCS. */
  readonly failsafeActive: boolean;
  /** This node needs an operator to rebuild its data directory (why, and the command to run); it stays out of service meanwhile. */
  readonly reinitializeRequired?: string;
  /** What this node waits for before it can serve (no leader to clone from, another member bootstrapping...). */
  readonly waitingFor?: string;
  /** The server runs without answering and was last seen as a primary: once it answers it may take writes, so no other node may promote before it is stopped. */
  readonly silentPrimary?: boolean;
  /** A job that failed repeatedly is held back until `retryAt` (epoch ms); its failures were logged as they happened. */
  readonly backoff?: { readonly job: string; readonly retryAt: number };
}

/** The earlier of two wake-up times (null: none asked). */
export function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** The outcome of one tick. */
export interface Decision {
  /** One line for the log: what was decided and why. */
  readonly message: string;
  readonly actions: readonly Action[];
  /** Name of the background job the long part of `actions` forms (`promote`, `demote`...). */
  readonly job: string | null;
  /** When set, `actions` is empty: gather this, then call decide() again. */
  readonly need: DecisionNeed | null;
  /**
   * Actions to run (best effort) when an action at index `fromIndex` <= i < `untilIndex` fails,
   * unless its error code is one of `unless` (a failure that changed nothing, say).
   */
  readonly rollback: {
    readonly fromIndex: number;
    readonly untilIndex: number;
    readonly actions: readonly Action[];
    readonly unless?: readonly string[];
    /** Error codes on which the rollback runs without its `removeData` steps: the data directory was never this sequence's to remove. */
    readonly keepDataOn?: readonly string[];
  } | null;
  /** Earliest moment decide() wants another tick (a scheduled action), epoch ms. */
  readonly wakeAt: number | null;
  readonly publish: PublishHints;
}

/** Builds a Decision with defaults for the fields not given. */
export function decision(message: string, actions: readonly Action[] = [], extra: Partial<Omit<Decision, 'message' | 'actions'>> = {}): Decision {
  return Object.freeze({
    message,
    actions: Object.freeze([...actions]),
    job: extra.job ?? null,
    need: extra.need ?? null,
    rollback: extra.rollback ?? null,
    wakeAt: extra.wakeAt ?? null,
    publish: extra.publish ?? { failsafeActive: false },
  });
}

/** A decision that asks the loop to gather something first. */
export function needs(what: DecisionNeed, message: string): Decision {
  return decision(message, [], { need: what });
}
