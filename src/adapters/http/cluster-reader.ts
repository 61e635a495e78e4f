import type { Cluster } from '../../domain/cluster/model/cluster.js';
import type { ClusterStore } from '../../ports/cluster-store.js';

/** Reads the cluster from the store (DcsUnavailableError -> 503). */
export async function readCluster(store: ClusterStore): Promise<{ cluster: Cluster }> {
  return { cluster: await store.read() };
}
