import type { Cluster } from './cluster.js';
import type { DynamicConfig } from '../config/config.js';
import type { LocalFacts } from './facts.js';
import type { NodeSettings } from './node.js';
import type { NodeStatus } from './status.js';

/**
 * What the HA loop publishes after every tick. The REST API answers health checks,
 * `/node`, `/metrics` from it alone, so no request ever waits on the loop or the DCS.
 */
export interface NodeSnapshot {
  readonly status: NodeStatus;
  readonly facts: LocalFacts;
  readonly node: NodeSettings;
  readonly config: DynamicConfig;
  /** Last successful DCS view; null before the first read. */
  readonly cluster: Cluster | null;
  /** Epoch ms of that read. */
  readonly clusterReadAt: number | null;
  /** Epoch ms until which this node holds the leader lock (last refresh + ttl); null when it does not. */
  readonly leaderLockExpiresAt: number | null;
  /** Epoch ms when the last HA loop run finished. */
  readonly lastLoopAt: number;
  /** Whether this node is leader of a standby cluster (standby_cluster configured). */
  readonly standbyCluster: boolean;
}
