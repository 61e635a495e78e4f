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
import type { KeyValueStore, WriteCondition } from './key-value.js';
import { ClusterKey } from './keys.js';

/** Keys whose change is reported by kind alone. */
const PLAIN_KINDS = new Map<string, ClusterChange>(
  (['failover', 'config', 'initialize', 'sync', 'status', 'history', 'failsafe'] as const).map((k) => [ClusterKey[k], Object.freeze({ kind: k })]),
);

const RESYNC: ClusterChange = Object.freeze({ kind: 'resync' });

/** The change a watch event on `key` stands for; null for keys outside the layout. */
export function changeOf(key: string, value: string | null): ClusterChange | null {
  if (key === '') return RESYNC;
  if (key === ClusterKey.leader) return { kind: 'leader', holder: value || null };
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

/**
 * The ClusterStore port over a key-value store with leases (etcd v3 or the in-memory one):
 * the leader lock is a key on this agent's lease, taken by atomic create and renewed by a
 * compare-and-set on its value; the member record sits on the same lease; requests and
 * settings are JSON values written with compare-and-set on their revision. The lock deadline
 * is computed here, from the moment before the lease was renewed, so it never overstates
 * what etcd grants. Reads may be served from the last view while nothing changed: every
 * write through this store, and every change its watches report, makes the next read new.
 */
export class KeyValueClusterStore implements ClusterStore {
  private readonly parser: ClusterParser;
  private last: ReadView | null = null;
  private generation = 0;
  private inflight: { readonly generation: number; readonly view: Promise<ReadView> } | null = null;
  private published: { readonly member: string; readonly value: string } | null = null;

  constructor(
    protected readonly kv: KeyValueStore,
    private readonly clock: Clock,
    logger: Logger,
  ) {
    this.parser = new ClusterParser(logger);
  }

  async read(opts: ReadOptions = {}): Promise<Cluster> {
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
    return this.kv.watch((key, value) => {
      const change = changeOf(key, value);
      if (change === null) return;
      this.generation++;
      listener(change);
    });
  }

  async acquireLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null> {
    const started = this.clock.now();
    await this.kv.keepAlive(ttlSeconds);
    this.wrote();
    if (!(await this.kv.create(ClusterKey.leader, member, { leased: true }))) return null;
    return { deadline: started + ttlSeconds * 1000 };
  }

  async renewLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null> {
    const started = this.clock.now();
    await this.kv.keepAlive(ttlSeconds);
    this.wrote();
    if (!(await this.kv.put(ClusterKey.leader, member, { leased: true, if: { value: member } }))) return null;
    return { deadline: started + ttlSeconds * 1000 };
  }

  async releaseLeader(member: string): Promise<boolean> {
    this.wrote();
    return this.kv.delete(ClusterKey.leader, { value: member });
  }

  async publishMember(member: string, record: MemberRecord, ttlSeconds: number): Promise<void> {
    const leaseKept = await this.kv.keepAlive(ttlSeconds);
    const value = memberToJson(record);
    const listed = this.last?.cluster.members.some((m) => m.name === member) ?? false;
    const same = this.published?.member === member && this.published.value === value;
    // Written only when it changed, the lease was replaced, or the key went missing.
    if (leaseKept && listed && same) return;
    this.published = null;
    this.wrote();
    await this.kv.put(ClusterKey.member(member), value, { leased: true });
    this.published = { member, value };
  }

  async leave(): Promise<void> {
    this.wrote();
    this.published = null;
    await this.kv.revokeLease();
  }

  async claimInitialize(): Promise<boolean> {
    this.wrote();
    return this.kv.create(ClusterKey.initialize, '');
  }

  async completeInitialize(systemIdentifier: string): Promise<void> {
    this.wrote();
    await this.kv.put(ClusterKey.initialize, systemIdentifier);
  }

  async abandonInitialize(revision: string | null): Promise<boolean> {
    this.wrote();
    return this.kv.delete(ClusterKey.initialize, revision === null ? { value: '' } : { revision });
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
    await this.put(ClusterKey.history, historyToJson(lines), undefined);
  }

  async writeStatus(status: StatusRecord): Promise<void> {
    await this.put(ClusterKey.status, statusToJson(status), undefined);
  }

  async writeFailsafe(members: Readonly<Record<string, string>>): Promise<void> {
    await this.put(ClusterKey.failsafe, JSON.stringify(members), undefined);
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
    return this.kv.close();
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
