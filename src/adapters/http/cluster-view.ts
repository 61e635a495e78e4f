import type { Cluster } from '../../domain/cluster/model/cluster.js';
import { clusterDocument } from '../../domain/cluster/model/cluster-document.js';
import { DcsUnavailableError } from '../../domain/errors.js';
import type { AgentControl } from '../../ports/agent-control.js';
import type { Clock } from '../../ports/clock.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { Logger } from '../../ports/logger.js';
import { readCluster } from './cluster-reader.js';

/** A view younger than this is served as is (the HA loop re-reads the DCS on every change it is woken for). */
export const CLUSTER_VIEW_FRESH_MS = 1_000;

/** A cluster view and when it was read (epoch ms). */
interface View {
  readonly cluster: Cluster;
  readonly at: number;
}

/**
 * The cluster view `GET /cluster` answers from: the newer of the HA loop's last DCS read
 * (in the snapshot) and this API's own last read, when younger than `freshMs`; otherwise one
 * DCS read, shared by every request that arrives while it runs. When the DCS cannot be read,
 * a view up to `ttl` old still answers (the agent itself trusts it that long); older, the
 * DcsUnavailableError stands (503). Under load this costs at most one DCS read per
 * `freshMs` instead of one per request.
 */
export class ClusterViewSource {
  private own: View | null = null;
  private reading: Promise<View> | null = null;

  constructor(
    private readonly control: AgentControl,
    private readonly store: ClusterStore,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly freshMs = CLUSTER_VIEW_FRESH_MS,
  ) {}

  /** The newest view that is fresh enough, or a new read. Throws DcsUnavailableError as described above. */
  async current(): Promise<Cluster> {
    const best = this.newest();
    if (best !== null && this.clock.now() - best.at < this.freshMs) return best.cluster;
    try {
      return (await this.read()).cluster;
    } catch (err) {
      const fallback = this.newest();
      const ttlMs = this.control.snapshot().config.ttl * 1000;
      if (err instanceof DcsUnavailableError && fallback !== null && this.clock.now() - fallback.at <= ttlMs) return fallback.cluster;
      throw err;
    }
  }

  private newest(): View | null {
    const snap = this.control.snapshot();
    const loop: View | null = snap.cluster !== null && snap.clusterReadAt !== null ? { cluster: snap.cluster, at: snap.clusterReadAt } : null;
    if (loop === null) return this.own;
    if (this.own === null) return loop;
    return this.own.at > loop.at ? this.own : loop;
  }

  private read(): Promise<View> {
    this.reading ??= (async () => {
      try {
        const { cluster } = await readCluster(this.store);
        this.own = { cluster, at: this.clock.now() };
        return this.own;
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }
}

/** Serialises the cluster document once per cluster view (the snapshot's view stays the same object between reads). */
export class ClusterBodyCache {
  private cluster: Cluster | null = null;
  private scope = '';
  private body: Buffer = Buffer.alloc(0);

  /** The JSON bytes of the cluster document of `cluster`. */
  get(scope: string, cluster: Cluster): Buffer {
    if (cluster !== this.cluster || scope !== this.scope) {
      this.body = Buffer.from(JSON.stringify(clusterDocument(scope, cluster)));
      this.cluster = cluster;
      this.scope = scope;
    }
    return this.body;
  }
}
