import type { DcsEntry, DcsSnapshot } from './keys.js';
import { DcsUnavailableError } from '../../domain/errors.js';
import type { Clock } from '../../ports/clock.js';
import { compareRevisions, type ChangesSince, type KeyValueStore, type ProgressTrust, type PutOptions, type RevisionedSnapshot, type WatchInfo, type WriteCondition } from './key-value.js';

/** TTL given to a lease created by a leased write before any keepAlive (the default `ttl`). */
const DEFAULT_LEASE_TTL_SECONDS = 30;

interface StoredKey {
  readonly value: string;
  /** Global revision of the last write (etcd mod_revision). */
  readonly modRevision: number;
  readonly lease: number | null;
}

interface Lease {
  readonly ttlSeconds: number;
  lastKeepAlive: number;
}

interface Subscription {
  readonly client: InMemoryKeyValue;
  /** Absolute prefix the subscriber watches. */
  readonly prefix: string;
  readonly listener: (key: string, value: string | null, info: WatchInfo) => void;
  /** An event went undelivered (the client was cut off): the watch reconnects, reporting `''`, before it confirms progress again. */
  missed: boolean;
  /** The last report on its way to the listener: reports reach it in order. */
  tail: Promise<void>;
  /** Reports on their way (not yet delivered nor dropped). */
  inFlight: number;
}

/** Options of a shared in-memory store. */
export interface InMemoryKeyValueSpaceOptions {
  /** While the store (or a client) is unreachable, calls reject after this many ms of the clock (default 0: at once). */
  readonly unavailableDelayMs?: number;
  /**
   * Mimic etcd restarting: leases still present when the store comes back are renewed
   * (etcd extends every lease by its TTL on a leader change). Default false: leases keep
   * expiring by the clock during an outage, the stricter model.
   */
  readonly renewLeasesOnRecovery?: boolean;
}

/**
 * The shared state of an in-memory DCS: keys with revisions, TTL leases driven by a
 * `Clock`, and watchers. Several `InMemoryKeyValue` clients (one per simulated agent) use one
 * store, as agents share one etcd. Lease expiry is checked lazily on every access and by
 * `expireLeases()`, which tests call after moving the clock.
 */
export class InMemoryKeyValueSpace {
  private readonly keys = new Map<string, StoredKey>();
  private readonly leases = new Map<number, Lease>();
  private readonly subscriptions = new Set<Subscription>();
  private revision = 0;
  private nextLeaseId = 1;
  private up = true;
  /** The store has a raft leader: it takes writes and expires leases (see setWritable). */
  private leader = true;
  /** See InMemoryKeyValueSpaceOptions.unavailableDelayMs; may be changed by tests. */
  unavailableDelayMs: number;
  private readonly renewLeasesOnRecovery: boolean;

  constructor(
    readonly clock: Clock,
    opts: InMemoryKeyValueSpaceOptions = {},
  ) {
    this.unavailableDelayMs = opts.unavailableDelayMs ?? 0;
    this.renewLeasesOnRecovery = opts.renewLeasesOnRecovery ?? false;
  }

  /** Whether the whole store answers. */
  get reachable(): boolean {
    return this.up;
  }

  /** Whether the store takes writes (false: etcd without a raft leader, see setWritable). */
  get writable(): boolean {
    return this.leader;
  }

  /**
   * Takes the store's raft leader away (an etcd that lost its quorum) or gives it back. Without
   * it reads are still answered (a member answers from what it holds), every write and lease
   * keep-alive waits `unavailableDelayMs` and fails, and no lease expires (only a leader expires
   * leases; a new one grants every lease its full TTL again, as etcd's does).
   */
  setWritable(writable: boolean): void {
    if (writable && !this.leader) {
      const now = this.clock.now();
      for (const lease of this.leases.values()) lease.lastKeepAlive = now;
    }
    this.leader = writable;
  }

  /** Takes the whole store down (every client's calls reject) or brings it back. */
  setReachable(up: boolean): void {
    if (up && !this.up && this.renewLeasesOnRecovery) {
      const now = this.clock.now();
      for (const lease of this.leases.values()) lease.lastKeepAlive = now;
    }
    this.up = up;
    if (up) this.reconnectWatches();
  }

  /** Current global revision (etcd header revision). */
  get currentRevision(): string {
    return String(this.revision);
  }

  /** Deletes the keys of every lease whose TTL has run out, notifying watchers. No-op while the store is down or has no leader. */
  expireLeases(): void {
    if (!this.up || !this.leader) return;
    const now = this.clock.now();
    for (const [id, lease] of this.leases) {
      if (now >= lease.lastKeepAlive + lease.ttlSeconds * 1000) this.dropLease(id);
    }
  }

  /** Inspection for tests: the entry at an absolute key, without expiring anything. */
  peek(absoluteKey: string): (DcsEntry & { readonly leased: boolean }) | undefined {
    const k = this.keys.get(absoluteKey);
    return k && { value: k.value, revision: String(k.modRevision), leased: k.lease !== null };
  }

  /** Inspection for tests: every absolute key, sorted. */
  allKeys(): string[] {
    return [...this.keys.keys()].sort();
  }

  /** Number of live (not yet expired or revoked) leases. */
  get leaseCount(): number {
    return this.leases.size;
  }

  // ---- operations used by InMemoryKeyValue (absolute keys; callers checked reachability) ----

  /** @internal */
  isLeaseAlive(id: number | null): boolean {
    if (id === null) return false;
    this.expireLeases();
    return this.leases.has(id);
  }

  /** @internal */
  leaseTtl(id: number): number | undefined {
    return this.leases.get(id)?.ttlSeconds;
  }

  /** @internal Renews a live lease; false when it is gone. */
  renewLease(id: number): boolean {
    const lease = this.leases.get(id);
    if (!lease) return false;
    lease.lastKeepAlive = this.clock.now();
    return true;
  }

  /** @internal */
  grantLease(ttlSeconds: number): number {
    const id = this.nextLeaseId++;
    this.leases.set(id, { ttlSeconds, lastKeepAlive: this.clock.now() });
    return id;
  }

  /** @internal Revokes a lease at once, deleting its keys. */
  revokeLease(id: number): void {
    this.dropLease(id);
  }

  /**
   * Revokes, at once, the lease `absoluteKey` sits on (an operator's `etcdctl lease revoke`),
   * or with no key every lease (an etcd raft leader resumed after a freeze longer than the
   * TTLs revokes every lease it counted as expired, etcd issue 15247): their keys go, in one
   * revision per lease. False when there was no such lease. Works while the store has no leader too.
   */
  revokeLeasesEarly(absoluteKey?: string): boolean {
    if (absoluteKey === undefined) {
      const ids = [...this.leases.keys()];
      for (const id of ids) this.dropLease(id);
      return ids.length > 0;
    }
    const id = this.keys.get(absoluteKey)?.lease ?? null;
    if (id === null || !this.leases.has(id)) return false;
    this.dropLease(id);
    return true;
  }

  /** @internal */
  range(prefix: string): Map<string, DcsEntry> {
    this.expireLeases();
    const out = new Map<string, DcsEntry>();
    for (const key of [...this.keys.keys()].sort()) {
      if (!key.startsWith(prefix)) continue;
      const k = this.keys.get(key)!;
      out.set(key.slice(prefix.length), Object.freeze({ value: k.value, revision: String(k.modRevision), lease: k.lease === null ? null : String(k.lease) }));
    }
    return out;
  }

  /** @internal Every key under the prefix changed after `revision`, and how many keys the prefix holds. */
  rangeChangedSince(prefix: string, revision: string): { readonly changed: Map<string, DcsEntry>; readonly count: number } {
    const all = this.range(prefix);
    const changed = new Map([...all].filter(([, e]) => compareRevisions(e.revision, revision) > 0));
    return { changed, count: all.size };
  }

  /** @internal Atomic compare-and-put: all of `cond` must hold (`mustBeAbsent` for create). */
  txnPut(key: string, value: string, lease: number | null, cond: WriteCondition | undefined): boolean {
    this.expireLeases();
    if (!this.holds(key, cond)) return false;
    this.revision++;
    this.keys.set(key, { value, modRevision: this.revision, lease });
    this.notify([key], value, lease);
    return true;
  }

  /** @internal Atomic compare-and-delete; false when absent or the condition fails. */
  txnDelete(key: string, cond: WriteCondition | undefined): boolean {
    this.expireLeases();
    if (!this.keys.has(key) || !this.holds(key, cond)) return false;
    this.revision++;
    this.keys.delete(key);
    this.notify([key], null, null);
    return true;
  }

  /**
   * @internal Reports `''` to every watch that missed an event and whose client reaches the
   * store again, as a watch stream reconnecting after an outage does (`client`: its watches only).
   */
  reconnectWatches(client?: InMemoryKeyValue): void {
    for (const sub of this.subscriptions) {
      if (!sub.missed || (client && sub.client !== client) || !this.up || !sub.client.reachable) continue;
      sub.missed = false;
      const info: WatchInfo = { revision: String(this.revision), lease: null };
      this.deliver(sub, () => sub.listener('', null, info));
    }
  }

  /** @internal Whether a report is on its way to a watch of `client`. */
  reportsInFlight(client: InMemoryKeyValue): boolean {
    for (const sub of this.subscriptions) if (sub.client === client && sub.inFlight > 0) return true;
    return false;
  }

  /** @internal Resolves once every report on its way to a watch of `client` was delivered (or dropped). */
  async delivered(client: InMemoryKeyValue): Promise<void> {
    await Promise.all([...this.subscriptions].filter((sub) => sub.client === client).map((sub) => sub.tail));
  }

  /** @internal Whether any watch of `client` missed an event and has not reconnected since. */
  missedEvents(client: InMemoryKeyValue): boolean {
    for (const sub of this.subscriptions) if (sub.client === client && sub.missed) return true;
    return false;
  }

  /** @internal */
  subscribe(sub: Subscription): () => void {
    this.subscriptions.add(sub);
    return () => {
      this.subscriptions.delete(sub);
    };
  }

  private holds(key: string, cond: WriteCondition | undefined): boolean {
    if (!cond) return true;
    const current = this.keys.get(key);
    if (cond.revision !== undefined) {
      const rev = current ? String(current.modRevision) : '0';
      if (rev !== cond.revision) return false;
    }
    if (cond.value !== undefined && (!current || current.value !== cond.value)) return false;
    return true;
  }

  private dropLease(id: number): void {
    if (!this.leases.delete(id)) return;
    const gone: string[] = [];
    for (const [key, k] of this.keys) if (k.lease === id) gone.push(key);
    if (!gone.length) return;
    // etcd deletes all keys of an expired lease in one revision.
    this.revision++;
    for (const key of gone) this.keys.delete(key);
    this.notify(gone, null, null);
  }

  /** Tells every watcher of each key about its new value (null: deleted), at the current revision. */
  private notify(absoluteKeys: readonly string[], value: string | null, lease: number | null): void {
    const info: WatchInfo = { revision: String(this.revision), lease: lease === null ? null : String(lease) };
    for (const sub of this.subscriptions) {
      for (const key of absoluteKeys) {
        if (!key.startsWith(sub.prefix)) continue;
        // A partitioned client misses events, as a watch on a broken connection would.
        if (!this.up || !sub.client.reachable) {
          sub.missed = true;
          continue;
        }
        const relative = key.slice(sub.prefix.length);
        this.deliver(sub, () => sub.listener(relative, value, info));
      }
    }
  }

  /**
   * Hands a report to a watch's listener: in a microtask queued now, or after the client's
   * `eventDelayMs` on the clock, always in the order reported. A delayed report that finds its
   * client cut off is missed, as on a watch stream that broke meanwhile.
   */
  private deliver(sub: Subscription, report: () => void): void {
    const run = () => {
      if (!this.subscriptions.has(sub)) return;
      try {
        report();
      } catch {
        // A throwing listener must not break the writer or other watchers.
      }
    };
    const delay = sub.client.eventDelayMs;
    if (delay <= 0 && sub.inFlight === 0) {
      queueMicrotask(run);
      return;
    }
    const due = this.clock.now() + delay;
    sub.inFlight++;
    sub.tail = sub.tail.then(async () => {
      const wait = due - this.clock.now();
      if (wait > 0) await this.clock.sleep(wait);
      sub.inFlight--;
      if (!this.up || !sub.client.reachable) sub.missed = true;
      else run();
    });
  }
}

/** Options of one client of an in-memory store. */
export interface InMemoryKeyValueOptions {
  /** Name of the agent using this client (diagnostics only). */
  readonly clientId: string;
  /** Cluster prefix (`/<namespace>/<scope>/`); default '' (the store holds one cluster). */
  readonly prefix?: string;
}

/**
 * One agent's view of an `InMemoryKeyValueSpace`, with its own lease: the `KeyValueStore` port with
 * etcd's semantics (atomic create, revision and value compare-and-set, leased keys that
 * vanish with their lease, prefix watch). `setReachable(false)` partitions this client only.
 */
export class InMemoryKeyValue implements KeyValueStore {
  readonly clientId: string;
  private readonly prefix: string;
  private leaseId: number | null = null;
  private lastTtl = DEFAULT_LEASE_TTL_SECONDS;
  private written = '0';
  private up = true;
  private closed = false;
  private readonly unsubscribers = new Set<() => void>();
  /** Ms each request and each answer spend on this client's link (0: none); tests of a slow but working link set it. */
  oneWayDelayMs = 0;
  /**
   * Its progress answers are not to be trusted (see progressTrust): they play etcd's before
   * 3.4.31 / 3.5.13, answering at once with the store's revision, ahead of any report still on
   * its way (`eventDelayMs`).
   */
  progressDistrusted = false;
  /** Ms each watch report spends on its way to this client (0: delivered in a microtask). */
  eventDelayMs = 0;

  constructor(
    private readonly store: InMemoryKeyValueSpace,
    opts: InMemoryKeyValueOptions,
  ) {
    this.clientId = opts.clientId;
    this.prefix = opts.prefix ?? '';
  }

  /** Whether this client can reach the store (its own link, not the store's state). */
  get reachable(): boolean {
    return this.up && !this.closed;
  }

  /** Partitions this client from the store (true heals it). */
  setReachable(up: boolean): void {
    this.up = up;
    if (up) this.store.reconnectWatches(this);
  }

  /** Id of this client's current lease, or null (for tests). */
  get currentLeaseId(): number | null {
    return this.leaseId;
  }

  async readAll(): Promise<DcsSnapshot> {
    await this.ensureReachable('readAll');
    return this.answer(this.store.range(this.prefix));
  }

  async readAllAt(): Promise<RevisionedSnapshot> {
    await this.ensureReachable('readAll');
    const entries = this.store.range(this.prefix);
    return this.answer({ entries, revision: this.store.currentRevision });
  }

  async readChangedSince(revision: string): Promise<ChangesSince> {
    await this.ensureReachable('readChangedSince');
    return this.answer({ ...this.store.rangeChangedSince(this.prefix, revision), revision: this.store.currentRevision });
  }

  currentLease(): string | null {
    return this.leaseId === null ? null : String(this.leaseId);
  }

  writtenRevision(): string {
    return this.written;
  }

  storeWentBack(revision: string): void {
    if (compareRevisions(this.written, revision) > 0) this.written = revision;
  }

  watching(): boolean {
    return !this.closed && this.up && this.store.reachable && this.unsubscribers.size > 0 && !this.store.missedEvents(this);
  }

  /** The in-memory watch is live from the moment it is taken: no waiting (and no timer, so simulations stay deterministic). */
  async whenWatching(): Promise<boolean> {
    return this.watching();
  }

  /**
   * Its progress answers are ordered with its events by construction; `progressDistrusted`
   * plays an etcd whose answers are not trusted (simulations, tests of the full-read path).
   */
  progressTrust(): ProgressTrust {
    return this.progressDistrusted ? { trusted: false, why: 'this store plays an etcd whose watch progress answers are not trusted' } : { trusted: true, why: null };
  }

  async progress(): Promise<string | null> {
    // Watch events reach this client without the link's delay: a progress answer counts from when it arrives, so it
    // never stands below an event delivered before it (as etcd's answers on the watch stream never do).
    if (this.oneWayDelayMs > 0) await this.store.clock.sleep(2 * this.oneWayDelayMs);
    if (this.closed || !this.up || !this.store.reachable || this.unsubscribers.size === 0) return null;
    // A watch that missed events reconnects first; the caller then reads anew.
    if (this.store.missedEvents(this)) {
      this.store.reconnectWatches(this);
      return null;
    }
    const revision = this.store.currentRevision;
    // An untrusted answer goes out at once, ahead of reports still on their way.
    if (this.progressDistrusted) return revision;
    // Events are delivered in microtasks queued when they happen (or after eventDelayMs): every earlier one runs before this.
    if (this.store.reportsInFlight(this)) await this.store.delivered(this);
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    return revision;
  }

  async keepAlive(ttlSeconds: number): Promise<boolean> {
    await this.ensureReachable('keepAlive', true);
    this.lastTtl = ttlSeconds;
    if (this.leaseId !== null && this.store.isLeaseAlive(this.leaseId) && this.store.leaseTtl(this.leaseId) === ttlSeconds) {
      this.store.renewLease(this.leaseId);
      return this.answer(true);
    }
    // A lease of another TTL is left to expire: keys on it move over on their next leased write.
    this.leaseId = this.store.grantLease(ttlSeconds);
    return this.answer(false);
  }

  async create(key: string, value: string, opts?: { readonly leased?: boolean }): Promise<string | null> {
    await this.ensureReachable('create', true);
    const created = this.store.txnPut(this.prefix + key, value, opts?.leased ? this.liveLease() : null, { revision: '0' });
    return this.answer(this.wrote(created ? this.store.currentRevision : null));
  }

  async put(key: string, value: string, opts?: PutOptions): Promise<boolean> {
    await this.ensureReachable('put', true);
    return this.answer(this.wrote(this.store.txnPut(this.prefix + key, value, opts?.leased ? this.liveLease() : null, opts?.if)));
  }

  async delete(key: string, cond?: WriteCondition): Promise<boolean> {
    await this.ensureReachable('delete', true);
    return this.answer(this.wrote(this.store.txnDelete(this.prefix + key, cond)));
  }

  async revokeLease(): Promise<void> {
    await this.ensureReachable('revokeLease', true);
    if (this.leaseId !== null) this.store.revokeLease(this.leaseId);
    this.leaseId = null;
    this.wrote(true);
  }

  watch(listener: (key: string, value: string | null, info: WatchInfo) => void): () => void {
    if (this.closed) return () => {};
    const unsubscribe = this.store.subscribe({ client: this, prefix: this.prefix, listener, missed: false, tail: Promise.resolve(), inFlight: 0 });
    const off = () => {
      unsubscribe();
      this.unsubscribers.delete(off);
    };
    this.unsubscribers.add(off);
    return off;
  }

  /** Nothing to apply: the in-memory store answers at once or fails after its own delay. */
  setRetryTimeout(): void {}

  async close(): Promise<void> {
    this.closed = true;
    for (const off of [...this.unsubscribers]) off();
  }

  /**
   * The lease a leased write attaches to. Without a live one (never kept alive, expired,
   * revoked) a new lease is granted with the last requested TTL, so a key is never put on
   * a dead lease; the next keepAlive then renews it.
   */
  private liveLease(): number {
    if (this.leaseId === null || !this.store.isLeaseAlive(this.leaseId)) this.leaseId = this.store.grantLease(this.lastTtl);
    return this.leaseId;
  }

  /** Remembers the store's revision after one of this client's writes. */
  private wrote<T>(result: T): T {
    this.written = this.store.currentRevision;
    return result;
  }

  /** The answer, after its trip back over a slow link. */
  private async answer<T>(value: T): Promise<T> {
    if (this.oneWayDelayMs > 0) await this.store.clock.sleep(this.oneWayDelayMs);
    return value;
  }

  /** Waits for the request's trip; throws when the store cannot answer it (down, cut off, or, for a write, without a leader). */
  private async ensureReachable(op: string, write = false): Promise<void> {
    if (this.closed) throw new DcsUnavailableError(`in-memory DCS client ${this.clientId} is closed (${op})`);
    // The request's trip to the store: it is applied when it arrives.
    if (this.oneWayDelayMs > 0 && this.up && this.store.reachable) await this.store.clock.sleep(this.oneWayDelayMs);
    if (this.closed) throw new DcsUnavailableError(`in-memory DCS client ${this.clientId} is closed (${op})`);
    if (this.up && this.store.reachable && (!write || this.store.writable)) return;
    const delay = this.store.unavailableDelayMs;
    if (delay > 0) await this.store.clock.sleep(delay);
    const what = !this.store.reachable ? 'the store is down' : !this.up ? `client ${this.clientId} is partitioned from the store` : 'the store has no leader (no quorum): no write is answered';
    throw new DcsUnavailableError(`in-memory DCS unreachable: ${what} (${op})`);
  }
}
