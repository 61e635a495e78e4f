import { cancelSwitchover, switchoverScheduleFromKey } from '../domain/cluster/rules/schedule.js';
import type { CommandDeps } from './command-deps.js';
import { CommandError } from './command-error.js';

/**
 * Removes the scheduled switchover (`DELETE /switchover`, wardenctl flush): the request is
 * cancelled with compare-and-set on the one read. Throws ScheduleError `not_scheduled` when
 * there is none, CommandError `dcs_write_failed` when it changed meanwhile, DcsUnavailableError.
 */
export async function cancelScheduledSwitchover(deps: Pick<CommandDeps, 'store' | 'agent'>): Promise<{ readonly message: string }> {
  const cluster = await deps.store.read();
  cancelSwitchover(switchoverScheduleFromKey(cluster.failover));
  if (!(await deps.store.writeFailover(null, cluster.failoverRevision))) {
    throw new CommandError('dcs_write_failed', 'failed to delete the scheduled switchover: the failover key was changed meanwhile');
  }
  deps.agent?.wake();
  await deps.agent?.refreshView().catch(() => undefined);
  return { message: 'scheduled switchover deleted' };
}
