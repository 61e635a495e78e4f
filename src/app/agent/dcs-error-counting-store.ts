import type { DcsOperation } from '../../adapters/metrics/dcs-operations.js';
import type { RawConfig } from '../../domain/cluster/config/config.js';
import type { Cluster, HistoryLine } from '../../domain/cluster/model/cluster.js';
import type { AgentMetricsSink } from '../../ports/agent-metrics.js';
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

/** The store's calls that reach the DCS (and may fail); the others never throw. */
type DcsCall = Exclude<keyof ClusterStore, 'lastRead' | 'watch' | 'setRetryTimeout' | 'close'>;

/**
 * What each call attempted, as an `operation` of svc_dcs_errors_total: a fixed name, or one
 * read from the call's arguments. A call left out is passed on uncounted.
 */
export type DcsOperationsOf = {
  readonly [K in DcsCall]?: DcsOperation | ((...args: Parameters<ClusterStore[K]>) => DcsOperation);
};

/**
 * A ClusterStore that counts every call that fails (throws) in svc_dcs_errors_total, under
 * the operation `operations` names for it, and throws the error on. A lost compare-and-set
 * (null or false: another member holds the key, the key changed meanwhile) is an answer, not
 * a failure, and is not counted. The HA loop counts its own calls where it makes them; this
 * is for the calls made elsewhere: the REST API's commands, the agent's shutdown.
 */
export class DcsErrorCountingStore implements ClusterStore {
  constructor(
    private readonly store: ClusterStore,
    private readonly metrics: Pick<AgentMetricsSink, 'dcsError'> | null,
    private readonly operations: DcsOperationsOf,
  ) {}

  private async counted<K extends DcsCall, T>(call: K, args: Parameters<ClusterStore[K]>, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const named = this.operations[call] as DcsOperation | ((...a: Parameters<ClusterStore[K]>) => DcsOperation) | undefined;
      const operation = typeof named === 'function' ? named(...args) : named;
      if (operation !== undefined) this.metrics?.dcsError(operation);
      throw error;
    }
  }

  read(opts?: ReadOptions): Promise<Cluster> {
    return this.counted('read', [opts], () => this.store.read(opts));
  }
  lastRead(): { readonly cluster: Cluster; readonly at: number } | null {
    return this.store.lastRead();
  }
  watch(listener: (change: ClusterChange) => void): () => void {
    return this.store.watch(listener);
  }
  acquireLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null> {
    return this.counted('acquireLeader', [member, ttlSeconds], () => this.store.acquireLeader(member, ttlSeconds));
  }
  renewLeader(member: string, ttlSeconds: number): Promise<LeaderLock | null> {
    return this.counted('renewLeader', [member, ttlSeconds], () => this.store.renewLeader(member, ttlSeconds));
  }
  releaseLeader(member: string): Promise<boolean> {
    return this.counted('releaseLeader', [member], () => this.store.releaseLeader(member));
  }
  publishMember(member: string, record: MemberRecord, ttlSeconds: number): Promise<void> {
    return this.counted('publishMember', [member, record, ttlSeconds], () => this.store.publishMember(member, record, ttlSeconds));
  }
  leave(): Promise<void> {
    return this.counted('leave', [], () => this.store.leave());
  }
  claimInitialize(systemIdentifier?: string): Promise<string | null> {
    return this.counted('claimInitialize', [systemIdentifier], () => this.store.claimInitialize(systemIdentifier));
  }
  completeInitialize(systemIdentifier: string): Promise<boolean> {
    return this.counted('completeInitialize', [systemIdentifier], () => this.store.completeInitialize(systemIdentifier));
  }
  replaceInitialize(systemIdentifier: string, revision: string): Promise<boolean> {
    return this.counted('replaceInitialize', [systemIdentifier, revision], () => this.store.replaceInitialize(systemIdentifier, revision));
  }
  abandonInitialize(revision: string): Promise<boolean> {
    return this.counted('abandonInitialize', [revision], () => this.store.abandonInitialize(revision));
  }
  writeConfig(config: RawConfig, ifRevision: IfRevision): Promise<boolean> {
    return this.counted('writeConfig', [config, ifRevision], () => this.store.writeConfig(config, ifRevision));
  }
  writeFailover(request: FailoverRequest | null, ifRevision: IfRevision): Promise<boolean> {
    return this.counted('writeFailover', [request, ifRevision], () => this.store.writeFailover(request, ifRevision));
  }
  writeSync(sync: SyncRecord, ifRevision: IfRevision): Promise<boolean> {
    return this.counted('writeSync', [sync, ifRevision], () => this.store.writeSync(sync, ifRevision));
  }
  clearSync(): Promise<void> {
    return this.counted('clearSync', [], () => this.store.clearSync());
  }
  writeHistory(lines: readonly HistoryLine[]): Promise<void> {
    return this.counted('writeHistory', [lines], () => this.store.writeHistory(lines));
  }
  writeStatus(status: StatusRecord): Promise<void> {
    return this.counted('writeStatus', [status], () => this.store.writeStatus(status));
  }
  writeFailsafe(members: Readonly<Record<string, string>>): Promise<void> {
    return this.counted('writeFailsafe', [members], () => this.store.writeFailsafe(members));
  }
  removeCluster(): Promise<number> {
    return this.counted('removeCluster', [], () => this.store.removeCluster());
  }
  setRetryTimeout(seconds: number): void {
    this.store.setRetryTimeout(seconds);
  }
  close(): Promise<void> {
    return this.store.close();
  }
}

/**
 * The calls of the REST API's commands (and of the agent's own switchover to a preferred
 * leader, which runs the same command): the cluster read for a request (`api_read`: `GET
 * /cluster`, `/config`, `/history` and the commands' reads, the switchover's wait for its
 * outcome included), a switchover or failover requested (`request_switchover`,
 * `request_failover`: the failover key written; a request naming a leader is a switchover),
 * a scheduled switchover cancelled (`cancel_switchover`), the dynamic configuration changed
 * (`change_config`: `PATCH /config`, `PUT /config`, pause and resume).
 */
export const COMMAND_DCS_OPERATIONS: DcsOperationsOf = {
  read: 'api_read',
  writeFailover: (request) => (request === null ? 'cancel_switchover' : request.leader === null ? 'request_failover' : 'request_switchover'),
  writeConfig: 'change_config',
};

/**
 * The calls of the agent's shutdown: the leader key released (`shutdown_release_leader`), the
 * member key marked stopped (`shutdown_publish_member`) or dropped (`shutdown_leave`), and
 * the last renewal of the lock of a paused primary left running under the fencer's guard
 * (`shutdown_renew_leader`).
 */
export const SHUTDOWN_DCS_OPERATIONS: DcsOperationsOf = {
  renewLeader: 'shutdown_renew_leader',
  releaseLeader: 'shutdown_release_leader',
  publishMember: 'shutdown_publish_member',
  leave: 'shutdown_leave',
};
