import { ScheduleError } from '../../domain/cluster/rules/schedule.js';
import { cancelScheduledSwitchover } from '../../usecases/cancel-switchover.js';
import { CommandError } from '../../usecases/command-error.js';
import { apiError, callAny, callMember, confirmOrAbort, isOk, parseRoleFilter, preferring, readCluster, selectMembers } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';
import { responseMessage } from './rest-client.js';
import { okMessage, onEachMember } from './restart.js';

/** Options of `flush`. */
export interface FlushOptions {
  readonly role?: string;
  readonly force?: boolean;
}

/** `flush restart|switchover`: cancel scheduled restarts (DELETE /restart) or the scheduled switchover (DELETE /switchover). */
export async function flush(ctx: CtlContext, target: string, names: readonly string[], opts: FlushOptions = {}): Promise<void> {
  if (target === 'restart') return flushRestart(ctx, names, opts);
  if (target === 'switchover') return flushSwitchover(ctx, opts);
  throw new CtlError('invalid_target', `flush: expected restart or switchover; got ${target}`);
}

async function flushRestart(ctx: CtlContext, names: readonly string[], opts: FlushOptions): Promise<void> {
  const cluster = await readCluster(ctx);
  const targets = selectMembers(cluster, names, parseRoleFilter(opts.role)).filter((m) => m.scheduledRestart);
  if (!targets.length) {
    ctx.out('No scheduled restart: nothing to cancel');
    return;
  }
  await confirmOrAbort(ctx, opts.force, `Cancel the scheduled restart of ${targets.map((m) => m.name).join(', ')}?`);
  await onEachMember(ctx, 'flush restart', targets, async (m) => {
    const res = await callMember(ctx, m, 'DELETE', 'restart');
    return res.status === 404 ? 'no restart was scheduled' : okMessage(res);
  });
}

async function flushSwitchover(ctx: CtlContext, opts: FlushOptions): Promise<void> {
  const cluster = await readCluster(ctx);
  const f = cluster.failover;
  if (!f?.scheduledAt) {
    ctx.out('No scheduled switchover: nothing to cancel');
    return;
  }
  await confirmOrAbort(ctx, opts.force, `Cancel the switchover scheduled at ${f.scheduledAt}?`);
  try {
    const { member, res } = await callAny(ctx, preferring(cluster, cluster.leader?.name), 'DELETE', 'switchover');
    if (res.status === 404) ctx.out('No scheduled switchover: nothing to cancel');
    else if (isOk(res)) ctx.out(responseMessage(res));
    else throw apiError('flush switchover', member.name, res);
    return;
  } catch (e) {
    if (!(e instanceof CtlError) || e.code !== 'api_unreachable') throw e;
  }
  // No agent answered: cancel in the DCS directly, with the command the agents run (compare-and-set on what it reads).
  try {
    await cancelScheduledSwitchover({ store: ctx.store, agent: null });
    ctx.out('No API answered; cancelled the scheduled switchover in the DCS');
  } catch (e) {
    if (e instanceof CommandError || e instanceof ScheduleError) throw new CtlError('concurrent_change', 'the scheduled switchover changed while cancelling it; run flush again');
    throw e;
  }
}
