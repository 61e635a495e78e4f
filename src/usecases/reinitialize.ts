import { holdsLeaderLock } from '../domain/cluster/rules/health.js';
import type { ActionResult, AgentControl } from '../ports/agent-control.js';
import type { Clock } from '../ports/clock.js';
import { CommandError } from './command-error.js';

/** Options of a reinitialize (`POST /reinitialize`). */
export interface ReinitializeInput {
  /** Proceed even while another action runs. */
  readonly force: boolean;
  /** Take the base backup from the leader rather than any member. */
  readonly fromLeader: boolean;
}

/**
 * Rebuilds this replica from a base backup (stop, wipe, clone, start) in the background: an
 * operator's explicit request, the only one that deletes a data directory. Refused on the
 * leader and in a cluster without one (CommandError `is_leader`, `no_leader`); the agent's
 * own refusals come back as the result.
 */
export async function reinitialize(deps: { readonly agent: AgentControl; readonly clock: Clock }, input: ReinitializeInput): Promise<ActionResult> {
  const snap = deps.agent.snapshot();
  const leader = snap.cluster?.leader?.name ?? null;
  if (snap.status.role === 'primary' || snap.status.role === 'standby_leader' || holdsLeaderLock(snap, deps.clock.now()) || leader === snap.node.name) {
    throw new CommandError('is_leader', 'reinitialize is not allowed on the leader; it is for replicas only');
  }
  if (leader === null) throw new CommandError('no_leader', 'reinitialize is not possible: the cluster has no leader to copy from');
  return deps.agent.reinitialize(input);
}
