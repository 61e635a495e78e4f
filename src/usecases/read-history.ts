import type { HistoryLine } from '../domain/cluster/model/cluster.js';
import { DcsUnavailableError } from '../domain/errors.js';
import type { AgentControl } from '../ports/agent-control.js';
import type { ClusterStore } from '../ports/cluster-store.js';

/**
 * The cluster's switchover and failover history (`GET /history`): the one the leader records
 * in the store (the last view read when the store is out of reach), else the local server's
 * timeline history files.
 */
export async function readHistory(deps: { readonly store: ClusterStore; readonly agent: AgentControl }): Promise<readonly HistoryLine[]> {
  let lines: readonly HistoryLine[] | undefined;
  try {
    lines = (await deps.store.read({ maxAgeMs: 1000 })).history?.lines;
  } catch (err) {
    if (!(err instanceof DcsUnavailableError)) throw err;
    lines = deps.store.lastRead()?.cluster.history?.lines;
  }
  if (lines && lines.length) return lines;
  return deps.agent.localHistory();
}
