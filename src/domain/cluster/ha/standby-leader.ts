import type { StandbyClusterConfig } from '../config/config.js';
import { decision, type Action, type Decision } from './decision.js';
import { failoverOnLeader } from './manual-switchover.js';
import { slotActions } from './maintenance.js';
import { remoteSlot, remoteUpstream } from './standby-cluster.js';
import { startTimeoutMs, type TickContext } from './tick-context.js';
import { disarmIfActive } from './watchdog-policy.js';

/**
 * A history key behind the standby leader's timeline: the remote switched timelines (a
 * failover over there, or the promotion this cluster was demoted after) and the replicas
 * need the switch point to tell whether they diverged.
 */
function historyActions(ctx: TickContext): Action[] {
  const tl = ctx.facts.timeline;
  if (tl === null) return [];
  const lines = ctx.cluster.history?.lines ?? [];
  const known = lines.length ? lines[lines.length - 1]![0] + 1 : 1;
  return tl > known ? [{ type: 'syncHistory', previous: lines, maxLines: ctx.config.max_timelines_history }] : [];
}

/**
 * The standby leader: its server runs in recovery and it holds the key. Like a primary it
 * refreshes the key first (a failure stops the tick), publishes its WAL position as the
 * cluster's optime (the race measures lag against it), keeps its replicas' slots, and
 * steps down for a requested switchover; unlike one it needs no watchdog (it cannot write).
 * Its server follows the remote: a changed standby_cluster (another host, a slot) is
 * applied at once, also in pause (the operator's change, not an automatic action).
 */
export function standbyLeaderTick(ctx: TickContext, sc: StandbyClusterConfig): Decision {
  const step = failoverOnLeader(ctx);
  if (step.kind === 'decide') return step.decision;
  const remote = remoteUpstream(sc);
  const source = remote?.name ?? 'the WAL archive';
  const actions: Action[] = [{ type: 'refreshLeader' }, ...disarmIfActive(ctx)];
  const messages: string[] = [`no action: I am ${ctx.me}, the standby leader with the lock, following ${source}`];
  let wakeAt: number | null = null;
  if (step.kind === 'clear') {
    actions.push(step.action);
    messages.push(step.message);
  } else if (step.kind === 'wait') {
    wakeAt = step.at;
    messages.push(step.message);
  }
  actions.push({ type: 'writeStatus', optime: ctx.myWal ?? 0, slots: {} }, ...slotActions(ctx), ...historyActions(ctx));
  if (ctx.paused) messages.push('PAUSE');
  const slot = remoteSlot(sc).slotName ?? null;
  const slotChanged = ctx.facts.upstreamSlotName !== undefined && (ctx.facts.upstreamSlotName ?? null) !== slot && remote !== null;
  if (ctx.facts.upstreamConnUrl !== (remote?.connUrl ?? null) || slotChanged) {
    messages[0] = `following ${source} as the standby leader (standby_cluster changed)`;
    actions.push({ type: 'follow', upstream: remote, ...remoteSlot(sc), timeoutMs: startTimeoutMs(ctx) });
    return decision(messages.join('; '), actions, { job: 'follow', wakeAt });
  }
  return decision(messages.join('; '), actions, { wakeAt });
}
