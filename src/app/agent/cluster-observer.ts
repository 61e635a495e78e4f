import { EMPTY_CLUSTER, type Cluster } from '../../domain/cluster/model/cluster.js';
import { resolveConfig, type DynamicConfig, type RawConfig } from '../../domain/cluster/config/config.js';
import type { AgentMetricsSink } from '../../ports/agent-metrics.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { AgentMemory } from './agent-memory.js';
import { describe } from './action-runner.js';
import { RepeatedFailures } from './repeated-failures.js';

/** The last holder of the leader key and its API address. */
export interface FormerLeader {
  readonly name: string;
  readonly apiUrl: string;
}

/** The cluster as this agent last saw it. */
export interface ClusterObservation {
  /** The last successful view; null before the first read. */
  readonly cluster: Cluster | null;
  /** Epoch ms when that read began. */
  readonly readAt: number | null;
  /** The latest read succeeded. */
  readonly reachable: boolean;
  /** The dynamic configuration in force (the stored one, else the bootstrap one). */
  readonly config: DynamicConfig;
}

/**
 * Reads the cluster from the store for the tick pipeline and for the API's read-your-writes
 * refresh: keeps the newest view (by when its read began, so a slow read never replaces a
 * newer one), the configuration resolved from it (applying a new retry_timeout to the store),
 * the initialize claim's age, and reports leader changes and read failures.
 */
export class ClusterObserver {
  private view: ClusterObservation;
  private resolvedFrom: unknown = null;
  /** The stored configuration as last read whole. */
  private lastReadable: RawConfig | null = null;
  private lastLeader: string | null | undefined = undefined;
  /** The last leader seen with an API address, while no later view showed another. */
  private leaderSeen: FormerLeader | null = null;
  private readonly failures: RepeatedFailures;

  constructor(
    private readonly store: ClusterStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly memory: AgentMemory,
    private readonly metrics: AgentMetricsSink | null,
    private readonly bootstrapConfig: () => RawConfig,
  ) {
    this.view = { cluster: null, readAt: null, reachable: false, config: resolveConfig(bootstrapConfig()) };
    this.failures = new RepeatedFailures(logger, clock);
  }

  /** The latest observation. */
  get current(): ClusterObservation {
    return this.view;
  }

  /**
   * The member that held the leader key when this agent last saw it held, while the key is
   * free: its lease may have ended before its time (revoked by an operator, or by an etcd
   * raft leader that resumed after a freeze), taking its member key along while its server
   * still writes. The race asks it too. Null while a leader holds the key, or none was seen.
   */
  get formerLeader(): FormerLeader | null {
    return this.view.cluster?.leader ? null : this.leaderSeen;
  }

  /** The cluster view, or an empty one before the first read. */
  get cluster(): Cluster {
    return this.view.cluster ?? EMPTY_CLUSTER;
  }

  /** Reads the cluster; a failure is logged and counted, and the last view stays (marked unreachable). */
  async observe(): Promise<void> {
    try {
      await this.refresh();
    } catch (error) {
      this.view = { ...this.view, reachable: false };
      this.metrics?.dcsError('read');
      this.failures.failed('DCS is not accessible', describe(error));
      this.resolve();
    }
  }

  /** Reads the cluster now. Throws DcsUnavailableError (the view is left as it was). */
  async refresh(): Promise<void> {
    const startedAt = this.clock.now();
    const cluster = await this.store.read();
    if (this.view.readAt !== null && startedAt < this.view.readAt) return;
    this.view = { ...this.view, cluster, readAt: startedAt, reachable: true };
    this.failures.succeeded('DCS is not accessible', 'DCS is accessible again');
    this.trackInitialize(cluster);
    this.trackLeader(cluster);
    this.resolve();
  }

  /** Local settings were reloaded: the bootstrap configuration may apply again. */
  settingsChanged(): void {
    this.resolve();
  }

  private resolve(): void {
    const stored = this.view.cluster?.config;
    // An unreadable key keeps the configuration last read (else the bootstrap one): its empty value would turn synchronous and maintenance mode off.
    if (stored && !stored.unreadable) this.lastReadable = stored.value;
    const raw = stored?.unreadable ? (this.lastReadable ?? this.bootstrapConfig()) : (stored?.value ?? this.bootstrapConfig());
    if (raw === this.resolvedFrom) return;
    this.resolvedFrom = raw;
    const config = resolveConfig(raw);
    this.view = { ...this.view, config };
    this.store.setRetryTimeout(config.retry_timeout);
  }

  /**
   * Remembers since when an incomplete initialize claim exists, to clean up after a dead
   * bootstrapper, and since when there is no initialize key at all (a replica's data waits a
   * while before it registers the cluster).
   */
  private trackInitialize(cluster: Cluster): void {
    const { initializeSeen: seen, noInitializeSince } = this.memory.memory;
    if (cluster.initialize === '' && cluster.initializeRevision !== null) {
      if (seen?.revision !== cluster.initializeRevision) this.memory.remember({ initializeSeen: { revision: cluster.initializeRevision, since: this.clock.now() } });
    } else if (seen) {
      this.memory.remember({ initializeSeen: null });
    }
    if (cluster.initialize === null) {
      if (noInitializeSince == null) this.memory.remember({ noInitializeSince: this.clock.now() });
    } else if (noInitializeSince != null) {
      this.memory.remember({ noInitializeSince: null });
    }
  }

  private trackLeader(cluster: Cluster): void {
    const leader = cluster.leader?.name ?? null;
    if (leader !== null) {
      const apiUrl = cluster.members.find((m) => m.name === leader)?.apiUrl;
      // A leader whose member key is not there yet keeps the address last seen for it.
      if (apiUrl) this.leaderSeen = { name: leader, apiUrl };
      else if (this.leaderSeen?.name !== leader) this.leaderSeen = null;
    }
    if (leader === this.lastLeader) return;
    if (this.lastLeader !== undefined) this.metrics?.leaderChanged(leader);
    this.lastLeader = leader;
  }
}
