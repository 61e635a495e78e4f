import type { RawConfig } from '../../domain/cluster/config/config.js';
import type { Cluster, HistoryLine } from '../../domain/cluster/model/cluster.js';
import type { Clock } from '../../ports/clock.js';
import type {
  ClusterChange,
  ClusterStore,
  FailoverRequest,
  IfRevision,
  LeaderLock,
  MemberRecord,
  ReadOptions,
  StatusRecord,
  SyncRecord,
} from '../../ports/cluster-store.js';
import type { Logger } from '../../ports/logger.js';
import { ClusterParser } from './cluster-parser.js';
import { failoverToJson, historyToJson, memberToJson, statusToJson, syncToJson } from './codec.js';
import { compareRevisions, type KeyValueStore, type WriteCondition } from './key-value.js';
import { ClusterKey } from './keys.js';
import { WatchedPrefix } from './watched-prefix.js';

/** Keys whose change is reported by kind alone. */
const PLAIN_KINDS = new Map<string, ClusterChange>(
  (['failover', 'config', 'initialize', 'sync', 'status', 'history', 'failsafe'] as const).map((k) => [ClusterKey[k], Object.freeze({ kind: k })]),
);

const RESYNC: ClusterChange = Object.freeze({ kind: 'resync' });

/** The change a watch event on `key` stands for; null for keys outside the layout. */
export function changeOf(key: string, value: string | null): ClusterChange | null {
  if (key === '') return RESYNC;
  // A leader key holding an empty value is held (by nobody known), not free: only a delete frees it.
  if (key === ClusterKey.leader) return { kind: 'leader', holder: value };
  if (key.startsWith(ClusterKey.membersPrefix)) return { kind: 'member', name: key.slice(ClusterKey.membersPrefix.length) };
  return PLAIN_KINDS.get(key) ?? null;
}

/** The key-value condition of a compare-and-set precondition. */
function conditionOf(ifRevision: IfRevision): WriteCondition | undefined {
  if (ifRevision === undefined) return undefined;
  return { revision: ifRevision ?? '0' };
}

/** A view this store read: when, and the write generation it reflects. */
interface ReadView {
  readonly cluster: Cluster;
  readonly at: number;
  readonly generation: number;
}

/** A renewal of this agent's lease: when it was asked for, with which TTL, and the lease it renewed (or granted). */
interface Renewal {
  readonly at: number;
  /** When etcd's answer came. */
  readonly answeredAt: number;
  readonly ttlSeconds: number;
  readonly lease: string | null;
}

/**
 * A lease renewal this recent (or still on its way) serves another caller in the same tick
 * (the leader's renewal and its member record): one keep-alive per agent and tick. The lock's
 * deadline is then counted from that renewal's start, which is earlier, never later.
 */
const RENEWAL_REUSE_MS = 1000;

/** A lock renewal's refresh of the copy begun at most this long before a read serves it too (both want the store as of the same moment). */
const SHARED_REFRESH_MS = 50;

/** Options of a KeyValueClusterStore. */
export interface KeyValueClusterStoreOptions {
  /**
   * Keep a copy of the cluster fed by one watch and read from it, confirmed current by the
   * watch's progress instead of a range read (an agent). Off: every read is a range read (a
   * short-lived command).
   */
  readonly watchedCopy?: boolean;
}

/**
 * The ClusterStore port over a key-value store with leases (etcd v3 or the in-memory one):
 * the leader lock is a key on this agent's lease, taken by atomic create; the member record
 * sits on the same lease; requests and settings are JSON values written with compare-and-set
 * on their revision. The lock deadline is computed here, from the moment before the lease
 * was renewed, so it never overstates what etcd grants.
 *
 * With a watched copy (`watchedCopy`), reads come from a copy of the cluster that one watch
 * keeps current, confirmed by the watch's progress before it is served (a full read when the
 * watch cannot confirm); the lock is renewed by the lease keep-alive alone while the
 * confirmed copy shows the leader key on this agent's lease; keys whose value would not
 * change are not written. Without it, every read is a range read (served again while
 * nothing changed and this store wrote nothing) and the lock is renewed by a
 * compare-and-set on its value.
 */
export class KeyValueClusterStore implements ClusterStore {
  private readonly parser: ClusterParser;
  private last: ReadView | null = null;
  private generation = 0;
  private inflight: { readonly generation: number; readonly view: Promise<ReadView> } | null = null;
  /** The confirmation or full read of the copy in flight: when it began and the store's write generation then. */
  private refreshing: { readonly at: number; readonly generation: number; readonly view: Promise<Cluster> } | null = null;
  /** The last lock renewal's refresh of the copy: when it began, the store's write generation and this client's newest write then. */
  private renewalRefresh: { readonly at: number; readonly generation: number; readonly written: string; readonly done: Promise<void> } | null = null;
  /** The member record this store last wrote, and the lease it put it on. */
  private published: { readonly member: string; readonly value: string; readonly lease: string | null } | null = null;
  private renewal: Renewal | null = null;
  /** The keep-alive on its way, if any: a caller content with a renewal begun this recently waits for it instead of sending another. */
  private renewing: { readonly at: number; readonly ttlSeconds: number; readonly done: Promise<Renewal> } | null = null;
  private readonly copy: WatchedPrefix | null;
  private readonly listeners = new Set<(change: ClusterChange) => void>();
  /** The cluster parsed from the copy, and the copy's change count it reflects. */
  private parsed: { readonly changes: number; readonly cluster: Cluster } | null = null;

  constructor(
    protected readonly kv: KeyValueStore,
    private readonly clock: Clock,
    logger: Logger,
    opts: KeyValueClusterStoreOptions = {},
  ) {
    this.parser = new ClusterParser(logger);
    this.copy = opts.watchedCopy ? new WatchedPrefix(kv, clock, (key, value) => this.changed(key, value), logger) : null;
  }

  async read(opts: ReadOptions = {}): Promise<Cluster> {
    if (this.copy) return this.readCopy(this.copy, opts.maxAgeMs ?? 0);
    const maxAgeMs = opts.maxAgeMs ?? 0;
    const last = this.last;
    if (maxAgeMs > 0 && last !== null && last.generation === this.generation && this.clock.now() - last.at < maxAgeMs) return last.cluster;
    // Callers content with a recent view share one read in flight, when nothing was written since it began.
    if (maxAgeMs > 0 && this.inflight !== null && this.inflight.generation === this.generation) return (await this.inflight.view).cluster;
    const generation = this.generation;
    const view = this.readNow(generation);
    this.inflight = { generation, view };
    try {
      return (await view).cluster;
    } finally {
      if (this.inflight?.view === view) this.inflight = null;
    }
  }

  lastRead(): { readonly cluster: Cluster; readonly at: number } | null {
    return this.last;
  }

  watch(listener: (change: ClusterChange) => void): () => void {
    if (this.copy) {
      this.copy.start();
      this.listeners.add(listener);
      return () => {
        this.listeners.delete(listener);
      };
    }
    return this.kv.watch((key, value) => {
      const change = changeOf(key, value);
      if (change === null) return;
      this.generation++;
      listener(change);
    });
  }

  async acquireLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null> {
    const { at } = await this.keepAlive(ttlSeconds, 0);
    this.wrote();
    if ((await this.kv.create(ClusterKey.leader, member, { leased: true })) === null) return null;
    return { deadline: at + ttlSeconds * 1000 };
  }

  async renewLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null> {
    // The keep-alive and, with a live copy, its confirmation at once: one round trip instead of two. The copy then
    // shows every change made before the confirmation was answered; the key can only have left this agent's lease
    // by the lease's expiry, which the keep-alive itself reveals (a new lease: the key is moved below), or by an
    // explicit delete, which the next read shows.
    // A copy the watch cannot confirm is read in full instead: a read, unlike a write, still works on an etcd out
    // of space, where a lock renewed by compare-and-set would be lost with no member able to take it.
    const refresh = (copy: WatchedPrefix) => {
      const at = this.clock.now();
      const written = this.kv.writtenRevision();
      const done = copy.refresh(at, written);
      // The loop's read, asked for at the same moment, is served by it (see readCopy).
      this.renewalRefresh = { at, generation: this.generation, written, done };
      return done.then(() => null, (e: unknown) => e);
    };
    const refreshed = this.copy?.isLive ? refresh(this.copy) : null;
    const { at } = await this.keepAlive(ttlSeconds, RENEWAL_REUSE_MS);
    const deadline = at + ttlSeconds * 1000;
    if (this.copy) {
      const failed = await (refreshed ?? refresh(this.copy));
      if (failed !== null) throw failed;
      const leader = this.copy.entry(ClusterKey.leader);
      if (leader?.value !== member) return null;
      // On the lease just renewed, the key lives as long as the lease: nothing to write.
      if (leader.lease !== null && leader.lease === this.kv.currentLease()) return { deadline };
    }
    // No copy, or the key sits on another lease (a replaced one): move it by compare-and-set.
    this.wrote();
    if (!(await this.kv.put(ClusterKey.leader, member, { leased: true, if: { value: member } }))) return null;
    return { deadline };
  }

  async releaseLeader(member: string): Promise<boolean> {
    this.wrote();
    return this.kv.delete(ClusterKey.leader, { value: member });
  }

  async publishMember(member: string, record: MemberRecord, ttlSeconds: number): Promise<void> {
    // The leader renews its lease every loop with its lock; a member record alone is kept by a renewal every quarter ttl
    // (counted from its answer: over a slow link the leader's renewal at the loop's start serves the record too).
    await this.keepAlive(ttlSeconds, Math.max(RENEWAL_REUSE_MS, ttlSeconds * 250), 'answered');
    const value = memberToJson(record);
    const p = this.published;
    const same = p?.member === member && p.value === value && p.lease !== null && p.lease === this.kv.currentLease();
    // Written only when it changed, the lease was replaced, or the key went missing.
    if (same && this.listed(member, value)) return;
    this.published = null;
    this.wrote();
    await this.kv.put(ClusterKey.member(member), value, { leased: true });
    this.published = { member, value, lease: this.kv.currentLease() };
  }

  async leave(): Promise<void> {
    this.wrote();
    this.published = null;
    this.renewal = null;
    this.renewing = null;
    await this.kv.revokeLease();
  }

  async claimInitialize(systemIdentifier = ''): Promise<string | null> {
    this.wrote();
    return this.kv.create(ClusterKey.initialize, systemIdentifier);
  }

  async completeInitialize(systemIdentifier: string): Promise<boolean> {
    this.wrote();
    return this.kv.put(ClusterKey.initialize, systemIdentifier, { if: { value: '' } });
  }

  replaceInitialize(systemIdentifier: string, revision: string): Promise<boolean> {
    return this.put(ClusterKey.initialize, systemIdentifier, revision);
  }

  async abandonInitialize(revision: string): Promise<boolean> {
    this.wrote();
    return this.kv.delete(ClusterKey.initialize, { revision, value: '' });
  }

  writeConfig(config: RawConfig, ifRevision: IfRevision): Promise<boolean> {
    return this.put(ClusterKey.config, JSON.stringify(config), ifRevision);
  }

  writeFailover(request: FailoverRequest | null, ifRevision: IfRevision): Promise<boolean> {
    return this.put(ClusterKey.failover, failoverToJson(request), ifRevision);
  }

  writeSync(sync: SyncRecord, ifRevision: IfRevision): Promise<boolean> {
    return this.put(ClusterKey.sync, syncToJson(sync), ifRevision);
  }

  async clearSync(): Promise<void> {
    this.wrote();
    await this.kv.delete(ClusterKey.sync);
  }

  async writeHistory(lines: readonly HistoryLine[]): Promise<void> {
    await this.putChanged(ClusterKey.history, historyToJson(lines));
  }

  async writeStatus(status: StatusRecord): Promise<void> {
    await this.putChanged(ClusterKey.status, statusToJson(status));
  }

  async writeFailsafe(members: Readonly<Record<string, string>>): Promise<void> {
    await this.putChanged(ClusterKey.failsafe, JSON.stringify(members));
  }

  async removeCluster(): Promise<number> {
    this.wrote();
    let removed = 0;
    for (const key of (await this.kv.readAll()).keys()) if (await this.kv.delete(key)) removed++;
    return removed;
  }

  setRetryTimeout(seconds: number): void {
    this.kv.setRetryTimeout(seconds * 1000);
  }

  close(): Promise<void> {
    this.copy?.stop();
    this.listeners.clear();
    return this.kv.close();
  }

  /**
   * A view from the watched copy: the last confirmed one when it is younger than `maxAgeMs`
   * and includes this store's writes, else the copy confirmed now, else a full read.
   */
  private async readCopy(copy: WatchedPrefix, maxAgeMs: number): Promise<Cluster> {
    copy.start();
    const written = this.kv.writtenRevision();
    const c = copy.confirmation;
    if (maxAgeMs > 0 && c !== null && this.clock.now() - c.at < maxAgeMs && compareRevisions(c.revision, written) >= 0) return this.fromCopy(copy, c.at);
    const at = this.clock.now();
    // Callers content with a recent view (GET /cluster) share a confirmation or full read begun less than maxAgeMs ago
    // when this store wrote nothing since: while the copy cannot be confirmed (etcd down or slow, the watch
    // reconnecting) each of them would otherwise start a range read of its own, retried until retry_timeout.
    const shared = this.refreshing;
    if (maxAgeMs > 0 && shared !== null && shared.generation === this.generation && at - shared.at < maxAgeMs) return shared.view;
    // A renewal's refresh begun at the same moment (the leader's loop renews and reads at once) serves this read:
    // it takes in every write of this store, and while the watch cannot confirm, two full reads per tick would
    // double what the leader costs etcd. Its failure is this read's: read again, the read would wait retry_timeout
    // a second time for an etcd that does not answer, and a failsafe round would come after the fencer's deadline.
    const r = this.renewalRefresh;
    const joined = r !== null && r.generation === this.generation && r.at >= at - SHARED_REFRESH_MS && compareRevisions(r.written, written) >= 0 ? r : null;
    const view = (async () => {
      if (joined !== null) {
        await joined.done;
        return this.fromCopy(copy, joined.at);
      }
      await copy.refresh(at, written);
      return this.fromCopy(copy, at);
    })();
    this.refreshing = { at, generation: this.generation, view };
    try {
      return await view;
    } finally {
      if (this.refreshing?.view === view) this.refreshing = null;
    }
  }

  /** The copy's cluster (parsed again only after a change), recorded as read at `at`. */
  private fromCopy(copy: WatchedPrefix, at: number): Cluster {
    if (this.parsed?.changes !== copy.changes) this.parsed = { changes: copy.changes, cluster: this.parser.parse(copy.snapshot()).cluster };
    const cluster = this.parsed.cluster;
    // The copy only moves forward: it is at least as new as any earlier confirmation.
    this.last = { cluster, at: Math.max(at, this.last?.at ?? at), generation: this.generation };
    return cluster;
  }

  /** Tells the watchers about a change the copy took in. */
  private changed(key: string, value: string | null): void {
    const change = changeOf(key, value);
    if (change === null) return;
    for (const l of [...this.listeners]) {
      try {
        l(change);
      } catch {
        // A throwing listener must not break the others or the copy.
      }
    }
  }

  /**
   * Renews the lease, or reuses a renewal of the same lease and TTL begun (or, with `since`
   * `answered`, answered) less than `reuseMs` ago.
   */
  private async keepAlive(ttlSeconds: number, reuseMs: number, since: 'sent' | 'answered' = 'sent'): Promise<Renewal> {
    const now = this.clock.now();
    const r = this.renewal;
    const age = r === null ? Infinity : now - (since === 'answered' ? r.answeredAt : r.at);
    if (r !== null && reuseMs > 0 && r.ttlSeconds === ttlSeconds && r.lease !== null && r.lease === this.kv.currentLease() && age < reuseMs) return r;
    const w = this.renewing;
    if (w !== null && reuseMs > 0 && w.ttlSeconds === ttlSeconds && now - w.at < reuseMs) return w.done;
    this.renewal = null;
    const done = this.kv.keepAlive(ttlSeconds).then(() => {
      const renewal = { at: now, answeredAt: this.clock.now(), ttlSeconds, lease: this.kv.currentLease() };
      if (this.renewing?.done === done) this.renewal = renewal;
      return renewal;
    });
    const mine = { at: now, ttlSeconds, done };
    this.renewing = mine;
    try {
      return await done;
    } finally {
      if (this.renewing === mine) this.renewing = null;
    }
  }

  /**
   * Whether `member`'s record with `value` is stored on this agent's current lease, as far as
   * this store knows: the live copy shows it; without one, the last view lists the member.
   */
  private listed(member: string, value: string): boolean {
    if (!this.copy) return this.last?.cluster.members.some((m) => m.name === member) ?? false;
    if (!this.copy.isLive) return false;
    const e = this.copy.entry(ClusterKey.member(member));
    return e !== undefined && e.value === value && e.lease === this.kv.currentLease();
  }

  /** An unconditional write, skipped when the live copy already holds this value. */
  private async putChanged(key: string, value: string): Promise<void> {
    if (this.copy?.isLive && this.copy.entry(key)?.value === value) return;
    await this.put(key, value, undefined);
  }

  private async readNow(generation: number): Promise<ReadView> {
    const at = this.clock.now();
    const { cluster } = this.parser.parse(await this.kv.readAll());
    const view = { cluster, at, generation };
    if (this.last === null || at >= this.last.at) this.last = view;
    return view;
  }

  private put(key: string, value: string, ifRevision: IfRevision): Promise<boolean> {
    this.wrote();
    const cond = conditionOf(ifRevision);
    return this.kv.put(key, value, cond ? { if: cond } : undefined);
  }

  /** Every later read is a new one: it must show what this store wrote. */
  private wrote(): void {
    this.generation++;
  }
}
