import type { Cluster } from '../domain/cluster/model/cluster.js';
import { DcsUnavailableError } from '../domain/errors.js';
import type { AgentControl } from '../ports/agent-control.js';
import type { Clock } from '../ports/clock.js';
import type { ClusterStore } from '../ports/cluster-store.js';

/** A view younger than this is served again (the store drops it at once when anything changes or this node writes). */
export const CLUSTER_VIEW_FRESH_MS = 1_000;

/**
 * The cluster for `GET /cluster` and wardenctl: a view at most a second old, new after any
 * write of this node (it reads its own writes). When the store cannot be read, the last view
 * still answers while it is younger than `ttl` (the agent itself trusts it that long); older,
 * the DcsUnavailableError stands.
 */
export async function readCluster(deps: { readonly store: ClusterStore; readonly agent: AgentControl | null; readonly clock: Clock }): Promise<Cluster> {
  try {
    return await deps.store.read({ maxAgeMs: CLUSTER_VIEW_FRESH_MS });
  } catch (err) {
    const last = deps.store.lastRead();
    const ttlMs = (deps.agent?.snapshot().config.ttl ?? 0) * 1000;
    if (err instanceof DcsUnavailableError && last !== null && deps.clock.now() - last.at <= ttlMs) return last.cluster;
    throw err;
  }
}
