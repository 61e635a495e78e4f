import type { DcsSnapshot } from './keys.js';

/** Condition a conditional write or delete must meet; all given members must hold. */
export interface WriteCondition {
  /** Current revision must equal this; `'0'` means the key must not exist. */
  readonly revision?: string;
  /** Current value must equal this. */
  readonly value?: string;
}

/** Options of a write. */
export interface PutOptions {
  /** Attach the key to this agent's lease, so it vanishes `ttl` after the last keepAlive. */
  readonly leased?: boolean;
  readonly if?: WriteCondition;
}

/** What a watch reports with a change of a key. */
export interface WatchInfo {
  /** The store revision of the change (etcd mod_revision; for a delete, the delete's revision). */
  readonly revision: string;
  /** The lease the key is attached to after a put (etcd's decimal id); null when none or deleted. */
  readonly lease: string | null;
}

/** Whether the store's answers to progress() can be trusted to follow every change they vouch for. */
export interface ProgressTrust {
  readonly trusted: boolean;
  /** Why they are not (for the operator), null while it is being learned or when they are. */
  readonly why: string | null;
}

/** Every key under the prefix and the store revision the read reflects. */
export interface RevisionedSnapshot {
  readonly entries: DcsSnapshot;
  /** etcd's header revision of the read: every change up to it is in `entries`. */
  readonly revision: string;
}

/** The keys under the prefix changed after a revision, and how many keys the prefix holds. */
export interface ChangesSince {
  /** Every key whose last change is after the revision asked about (deleted keys are not in it). */
  readonly changed: DcsSnapshot;
  /** How many keys the prefix holds, changed or not. */
  readonly count: number;
  /** etcd's header revision of the read. */
  readonly revision: string;
}

/**
 * A key-value store with leases, transactions and a prefix watch (etcd v3 semantics), scoped
 * to one cluster prefix (`/<namespace>/<scope>/`): what the cluster-store adapter encodes the
 * cluster into. Keys are relative names (`leader`, `members/node1`). Every call is bounded by
 * the retry timeout and fails with `DcsUnavailableError`, never hangs.
 */
export interface KeyValueStore {
  /** Reads every key under the prefix in one range read. Throws DcsUnavailableError. */
  readAll(): Promise<DcsSnapshot>;
  /** readAll, with the revision the read reflects. Throws DcsUnavailableError. */
  readAllAt(): Promise<RevisionedSnapshot>;
  /**
   * Reads only the keys under the prefix changed after `revision`, with the number of keys the
   * prefix holds (etcd: one range read filtered by min_mod_revision, whose count is of every
   * key): a copy holding every change up to `revision` equals the store when it holds as many
   * keys once these are applied. Linearizable as readAllAt is. Throws DcsUnavailableError.
   */
  readChangedSince(revision: string): Promise<ChangesSince>;
  /** Renews this agent's lease (creating it, or a new one with `ttlSeconds`, when missing, expired or of another TTL); false when a new lease had to be created. Throws DcsUnavailableError. */
  keepAlive(ttlSeconds: number): Promise<boolean>;
  /** The id of this client's lease (etcd's decimal id), or null when it has none yet. Never throws. */
  currentLease(): string | null;
  /** Creates the key only when absent (atomic): the new key's revision; null when it exists. Throws DcsUnavailableError. */
  create(key: string, value: string, opts?: { readonly leased?: boolean }): Promise<string | null>;
  /** Writes the key when `opts.if` holds (always without it); false on a failed condition. Throws DcsUnavailableError. */
  put(key: string, value: string, opts?: PutOptions): Promise<boolean>;
  /** Deletes the key when `cond` holds; false when it did not (or the key was absent). Throws DcsUnavailableError. */
  delete(key: string, cond?: WriteCondition): Promise<boolean>;
  /** Revokes this agent's lease now, dropping every leased key (clean shutdown). Throws DcsUnavailableError. */
  revokeLease(): Promise<void>;
  /**
   * The highest store revision this client's acknowledged writes (put, create, delete, lease
   * revoke, failed conditions included) answered with; '0' before the first. Never throws.
   */
  writtenRevision(): string;
  /**
   * The store's revision went back to `revision` (its data was lost or restored from a
   * snapshot): writes acknowledged above it are not in the store any more. Never throws.
   */
  storeWentBack(revision: string): void;
  /**
   * Calls `listener` with the relative key, its new value (null: deleted) and the change's
   * revision and lease, on every change under the prefix; after each (re)connect it calls it
   * with key `''`, null and the revision the new stream starts at (every later change is
   * reported), as changes before it may have been missed. Returns unsubscribe. Never throws.
   */
  watch(listener: (key: string, value: string | null, info: WatchInfo) => void): () => void;
  /**
   * Confirms this client's watches are current: resolves with a revision R once every change
   * up to R has been reported to their listeners, R being at least the store's revision when
   * the call was made (etcd: a watch progress request on each watch stream). Resolves null
   * when a watch is not live (connecting or reconnecting) or did not answer in time; a watch
   * that did not answer is reopened (reporting `''` when live again). The answer says so only
   * while progressTrust() trusts it. Never throws.
   */
  progress(): Promise<string | null>;
  /**
   * Whether progress() answers follow every change they vouch for (some etcd releases answer
   * ahead of changes still queued for the stream). Learned anew after each watch reconnect;
   * not trusted until then. Never throws.
   */
  progressTrust(): ProgressTrust;
  /** Whether this client has a watch and every one of its watches is live (created, not broken since). Never throws. */
  watching(): boolean;
  /** Resolves true once watching() holds (at once when it does), false after `timeoutMs` (real time) without. Never throws. */
  whenWatching(timeoutMs: number): Promise<boolean>;
  /** Applies a new retry timeout (ms) to every later call. Never throws. */
  setRetryTimeout(ms: number): void;
  /** Releases connections and watches. Never throws. */
  close(): Promise<void>;
}

/** Compares two store revisions (decimal strings of etcd's int64): negative, 0 or positive. */
export function compareRevisions(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The larger of two store revisions. */
export function maxRevision(a: string, b: string): string {
  return compareRevisions(a, b) >= 0 ? a : b;
}
