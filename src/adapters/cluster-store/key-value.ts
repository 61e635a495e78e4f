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

/**
 * A key-value store with leases, transactions and a prefix watch (etcd v3 semantics), scoped
 * to one cluster prefix (`/<namespace>/<scope>/`): what the cluster-store adapter encodes the
 * cluster into. Keys are relative names (`leader`, `members/node1`). Every call is bounded by
 * the retry timeout and fails with `DcsUnavailableError`, never hangs.
 */
export interface KeyValueStore {
  /** Reads every key under the prefix in one range read. Throws DcsUnavailableError. */
  readAll(): Promise<DcsSnapshot>;
  /** Renews this agent's lease (creating it, or a new one with `ttlSeconds`, when missing, expired or of another TTL); false when a new lease had to be created. Throws DcsUnavailableError. */
  keepAlive(ttlSeconds: number): Promise<boolean>;
  /** Creates the key only when absent (atomic); false when it exists. Throws DcsUnavailableError. */
  create(key: string, value: string, opts?: { readonly leased?: boolean }): Promise<boolean>;
  /** Writes the key when `opts.if` holds (always without it); false on a failed condition. Throws DcsUnavailableError. */
  put(key: string, value: string, opts?: PutOptions): Promise<boolean>;
  /** Deletes the key when `cond` holds; false when it did not (or the key was absent). Throws DcsUnavailableError. */
  delete(key: string, cond?: WriteCondition): Promise<boolean>;
  /** Revokes this agent's lease now, dropping every leased key (clean shutdown). Throws DcsUnavailableError. */
  revokeLease(): Promise<void>;
  /**
   * Calls `listener` with the relative key and its new value (null: deleted) on every change
   * under the prefix; after each (re)connect it calls it with key `''` and null, as changes may
   * have been missed. Returns unsubscribe. Never throws.
   */
  watch(listener: (key: string, value: string | null) => void): () => void;
  /** Applies a new retry timeout (ms) to every later call. Never throws. */
  setRetryTimeout(ms: number): void;
  /** Releases connections and watches. Never throws. */
  close(): Promise<void>;
}
