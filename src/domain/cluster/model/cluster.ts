import type { RawConfig } from '../config/config.js';
import type { PendingChange } from './facts.js';
import type { TagValue } from './node.js';

/** A scheduled restart as stored in a member key and shown in status documents. */
export interface ScheduledRestart {
  /** ISO 8601 with zone. */
  readonly schedule: string;
  readonly restart_pending?: boolean;
  readonly role?: string;
  readonly db_version?: string;
  readonly timeout?: number;
}

/** One member key (`members/<name>`): what a node publishes about itself each tick. */
export interface Member {
  readonly name: string;
  readonly revision: string;
  readonly connUrl: string;
  readonly apiUrl: string;
  /** State string (`running`, `starting`, ...). */
  readonly state: string;
  /** Role string (`primary`, `replica`, ...). */
  readonly role: string;
  readonly version: string;
  readonly xlogLocation: number | null;
  readonly receiveLsn: number | null;
  readonly replayLsn: number | null;
  readonly replicationState: string | null;
  readonly timeline: number | null;
  readonly tags: Readonly<Record<string, TagValue>>;
  readonly pendingRestart: boolean;
  readonly pendingRestartReason: Readonly<Record<string, PendingChange>> | null;
  readonly scheduledRestart: ScheduledRestart | null;
  /** A freshly promoted primary: false until its checkpoint after the promotion is done (absent: nothing pending). */
  readonly checkpointAfterPromote?: boolean;
  /** server_version_num of the member's running server (absent: not running, or not told). */
  readonly serverVersion?: number;
  /** The member's watchdog.safety_margin (s) where a fencer or watchdog device stops its PostgreSQL on the lock's deadline (absent: nothing does). */
  readonly safetyMargin?: number;
}

/** The leader key: the only source of "who may write". */
export interface Leader {
  readonly name: string;
  readonly revision: string;
}

/** The failover key: a requested switchover/failover (candidate stored as `member`). */
export interface FailoverKey {
  readonly leader: string | null;
  readonly member: string | null;
  /** ISO 8601 with zone; null for an immediate request. */
  readonly scheduledAt: string | null;
  readonly revision: string;
}

/** The sync key: which standbys the primary currently treats as synchronous. */
export interface SyncState {
  readonly leader: string | null;
  readonly syncStandby: readonly string[];
  /** Quorum size in quorum mode; 0 otherwise. */
  readonly quorum: number;
  /** Written by a new primary before it promotes: what it replaced, until it rewrites the key as a primary. */
  readonly promoting?: SyncPromotion;
  readonly revision: string;
}

/**
 * What a new primary's sync key replaced before it promoted. Its fencer puts the replaced key
 * back when it finds the promotion never happened (its agent died first): the commits the old
 * key vouched for are then still where it said, and nothing was acknowledged since.
 */
export interface SyncPromotion {
  /** The timeline the new primary was on when it wrote the key: a promotion leaves it. */
  readonly timeline: number;
  /** The key it replaced. */
  readonly replaced: { readonly leader: string | null; readonly syncStandby: readonly string[]; readonly quorum: number };
}

/** One line of timeline history: [timeline, lsn, reason, timestamp, new_leader]. */
export type HistoryLine = readonly [number, number, string, string | null, string | null];

/** The history key: past promotions, oldest first. */
export interface TimelineHistory {
  readonly lines: readonly HistoryLine[];
  readonly revision: string;
}

/** The status key: the leader's last WAL position and slot positions. */
export interface ClusterStatus {
  readonly optime: number;
  /** Positions of the leader's replication slots (physical: restart_lsn; logical: confirmed_flush_lsn). */
  readonly slots: Readonly<Record<string, number>>;
  /** Member slots the leader keeps (members present, and departed ones within member_slots_ttl): every member that can lead keeps them too. */
  readonly retainSlots?: readonly string[];
  readonly revision: string;
}

/** Stored dynamic configuration with its revision (for compare-and-set). */
export interface StoredConfig {
  readonly value: RawConfig;
  readonly revision: string;
  /**
   * The key holds something that is not a configuration (not JSON, not an object: a hand
   * edit): `value` is then empty, and the agents keep deciding on the last configuration they
   * could read, so an unreadable key never turns synchronous mode or maintenance mode off.
   */
  readonly unreadable?: true;
}

/** Everything the DCS says about the cluster, parsed once per tick. Immutable. */
export interface Cluster {
  /** System identifier written by the bootstrap winner; `''` while a bootstrap is in progress. */
  readonly initialize: string | null;
  /** Revision of the initialize entry (to abandon a claim whose bootstrapper died); null when absent. */
  readonly initializeRevision: string | null;
  readonly config: StoredConfig | null;
  readonly leader: Leader | null;
  /** Sorted by name. */
  readonly members: readonly Member[];
  readonly failover: FailoverKey | null;
  /** Revision of the failover entry, also when it holds no request (`{}`); null when absent: for compare-and-set. */
  readonly failoverRevision: string | null;
  readonly sync: SyncState | null;
  readonly history: TimelineHistory | null;
  readonly status: ClusterStatus | null;
  /** Members (name -> api_url) that confirm a primary while the DCS is unreachable. */
  readonly failsafe: Readonly<Record<string, string>> | null;
}

/** A cluster with nothing in it (before bootstrap). */
export const EMPTY_CLUSTER: Cluster = Object.freeze({
  initialize: null,
  initializeRevision: null,
  config: null,
  leader: null,
  members: Object.freeze([]),
  failover: null,
  failoverRevision: null,
  sync: null,
  history: null,
  status: null,
  failsafe: null,
});

/** Parse result: the cluster plus every key that could not be read (those keys are treated as absent). */
/** Finds a member by name. */
export function findMember(cluster: Cluster, name: string): Member | undefined {
  return cluster.members.find((m) => m.name === name);
}
