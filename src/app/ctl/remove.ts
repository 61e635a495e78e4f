import type { Cluster } from '../../domain/cluster/model/cluster.js';
import type { CtlContext } from './context.js';
import { AbortedError, CtlError } from './errors.js';

/**
 * `remove <scope>`: deletes every key of the cluster from the DCS, after the user types
 * the cluster name (and, when the cluster has a leader, the leader's name). The agents must
 * be stopped first, or they recreate their keys on their next loop.
 */
export async function remove(ctx: CtlContext, scope: string): Promise<void> {
  if (scope !== ctx.scope) throw new CtlError('scope_mismatch', `remove: asked for ${scope} but connected to ${ctx.scope}`);
  const cluster = await ctx.store.read();
  if (!clusterExists(cluster)) throw new CtlError('not_found', `cluster ${scope} does not exist in the DCS (no keys)`);
  const typed = (await ctx.ask(`This deletes everything the DCS holds for cluster ${scope}. Type the cluster name to confirm: `)).trim();
  if (typed !== scope) throw new AbortedError(typed ? `Aborted: ${JSON.stringify(typed)} is not ${scope}; nothing was removed` : 'Aborted: nothing was removed');
  const leader = cluster.leader?.name;
  if (leader) {
    const again = (await ctx.ask(`The cluster has a leader (${leader}): its agents are running and will write their keys again. Type the leader name to remove anyway: `)).trim();
    if (again !== leader) throw new AbortedError('Aborted: nothing was removed');
  }
  const removed = await ctx.store.removeCluster();
  ctx.out(`Removed ${removed} key(s) of cluster ${scope}`);
}

/** Whether the store holds anything of the cluster. */
function clusterExists(c: Cluster): boolean {
  return (
    c.initialize !== null || c.config !== null || c.leader !== null || c.members.length > 0 || c.failoverRevision !== null ||
    c.sync !== null || c.history !== null || c.status !== null || c.failsafe !== null
  );
}
