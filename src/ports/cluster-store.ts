import type { RawConfig } from '../domain/cluster/config/config.js';
import type { Cluster, ClusterStatus, FailoverKey, HistoryLine, Member, SyncState } from '../domain/cluster/model/cluster.js';

/** What a member publishes about itself (its name and the store's revision are added by the store). */
export type MemberRecord = Omit<Member, 'name' | 'revision'>;

/** A switchover or failover request as stored (the candidate is `member`). */
export type FailoverRequest = Omit<FailoverKey, 'revision'>;

/** Which standbys the primary treats as synchronous. */
export type SyncRecord = Omit<SyncState, 'revision'>;

/** The leader's last WAL position and slot positions. */
export type StatusRecord = Omit<ClusterStatus, 'revision'>;

/**
 * The precondition of a compare-and-set write: `undefined` writes unconditionally, `null`
 * only when nothing is stored yet, a revision only when the stored value still has it.
 */
export type IfRevision = string | null | undefined;

/** A leader lock this member holds: it may act as leader until `deadline` (epoch ms), no longer. */
export interface LeaderLock {
  readonly deadline: number;
}

/** What a watch reports: which part of the cluster changed (the value is read with `read()`). */
export type ClusterChange =
  | { readonly kind: 'leader'; readonly holder: string | null }
  | { readonly kind: 'failover' | 'config' | 'initialize' | 'sync' | 'status' | 'history' | 'failsafe' }
  | { readonly kind: 'member'; readonly name: string }
  /** The watch (re)connected: changes may have been missed, read everything again. */
  | { readonly kind: 'resync' };

/** Options of a read. */
export interface ReadOptions {
  /**
   * A view read at most this many ms ago may be returned instead of a new read, unless this
   * store has written since (a node reads its own writes). Default 0: always a new read.
   */
  readonly maxAgeMs?: number;
}

/**
 * The distributed store of one cluster, spoken at the level of intents (elect, publish,
 * request): the encoding of keys and values stays inside the adapters. Every call is
 * bounded by the retry timeout and fails with `DcsUnavailableError`, never hangs.
 */
export interface ClusterStore {
  /** The whole cluster view; malformed values are logged by the store and read as absent. Throws DcsUnavailableError. */
  read(opts?: ReadOptions): Promise<Cluster>;
  /** The newest view this store has read, with the epoch ms of that read; null before the first. Never throws. */
  lastRead(): { readonly cluster: Cluster; readonly at: number } | null;
  /** Reports every change; resubscribes after reconnects (reporting `resync`). Returns unsubscribe. Never throws. */
  watch(listener: (change: ClusterChange) => void): () => void;

  /** Takes the leader lock for `member` when nobody holds it; null when another member does. Throws DcsUnavailableError. */
  acquireLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null>;
  /** Renews the lock `member` holds; null when it no longer holds it. Throws DcsUnavailableError. */
  renewLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null>;
  /** Gives the lock up when `member` holds it; false when it did not. Throws DcsUnavailableError. */
  releaseLeader(member: string): Promise<boolean>;
  /**
   * Keeps `member`'s record alive on this agent's lease of `ttlSeconds` (renewed at least every
   * quarter of it, so the record outlives this call by at least three quarters of `ttlSeconds`),
   * writing it only when it changed. Throws DcsUnavailableError.
   */
  publishMember(member: string, record: MemberRecord, ttlSeconds: number): Promise<void>;
  /** Ends this agent's presence at once: its member record and any lock it holds vanish (clean shutdown). Throws DcsUnavailableError. */
  leave(): Promise<void>;

  /**
   * Creates the initialize key: empty (the caller initializes the cluster now) or with the
   * system identifier of data the caller already holds. Answers the new key's revision (what
   * abandonInitialize takes to drop this claim and no other), null when the key exists.
   * Throws DcsUnavailableError.
   */
  claimInitialize(systemIdentifier?: string): Promise<string | null>;
  /**
   * Records the new cluster's system identifier in place of the empty claim; false (nothing
   * written) when the key holds no empty claim any more: another member registered a cluster,
   * or deleted an abandoned claim. Throws DcsUnavailableError.
   */
  completeInitialize(systemIdentifier: string): Promise<boolean>;
  /**
   * Puts the system identifier of data this node holds in place of the abandoned empty claim
   * at `revision`, in one write: there is no moment without the key in which an empty node could
   * claim a new bootstrap. False when the key changed. Throws DcsUnavailableError.
   */
  replaceInitialize(systemIdentifier: string, revision: string): Promise<boolean>;
  /** Drops the claim with `revision` if it is still an empty one (never completed); false otherwise. Throws DcsUnavailableError. */
  abandonInitialize(revision: string): Promise<boolean>;

  /** Writes the dynamic configuration under `ifRevision`; false when the precondition failed. Throws DcsUnavailableError. */
  writeConfig(config: RawConfig, ifRevision: IfRevision): Promise<boolean>;
  /** Writes (or, with null, cancels) the switchover/failover request under `ifRevision`. Throws DcsUnavailableError. */
  writeFailover(request: FailoverRequest | null, ifRevision: IfRevision): Promise<boolean>;
  /** Writes the synchronous standby set under `ifRevision`. Throws DcsUnavailableError. */
  writeSync(sync: SyncRecord, ifRevision: IfRevision): Promise<boolean>;
  /** Removes the synchronous standby set. Throws DcsUnavailableError. */
  clearSync(): Promise<void>;
  /** Replaces the timeline history. Throws DcsUnavailableError. */
  writeHistory(lines: readonly HistoryLine[]): Promise<void>;
  /** Writes the leader's status (optime, slots). Throws DcsUnavailableError. */
  writeStatus(status: StatusRecord): Promise<void>;
  /** Writes the members that confirm a primary while the store is unreachable (name -> api_url). Throws DcsUnavailableError. */
  writeFailsafe(members: Readonly<Record<string, string>>): Promise<void>;
  /** Deletes everything stored for this cluster; returns how many entries went. Throws DcsUnavailableError. */
  removeCluster(): Promise<number>;

  /** Applies a new retry timeout (seconds) to every later call. Never throws. */
  setRetryTimeout(seconds: number): void;
  /** Releases connections and watches. Never throws. */
  close(): Promise<void>;
}
/** Inversify token of the ClusterStore port. */
export const ClusterStore = Symbol.for('warden.ClusterStore');
