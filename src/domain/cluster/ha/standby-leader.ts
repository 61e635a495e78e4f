import { finishBootstrap } from './bootstrap-leftovers.js';
import type { StandbyClusterConfig } from '../config/config.js';
import { decision, earliest, type Action, type Decision } from './decision.js';
import { applyLeaderStep, failoverOnLeader } from './manual-switchover.js';
import { leaderStatus, standbyLeaderSlotActions } from './slots.js';
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
  const wakeAt = applyLeaderStep(step, actions, messages);
  const leftovers = finishBootstrap(ctx);
  actions.push(...leftovers.actions);
  messages.push(...leftovers.messages);
  const status = leaderStatus(ctx);
  actions.push(
    { type: 'writeStatus', optime: ctx.myWal ?? 0, slots: status.slots, retainSlots: status.retainSlots },
    ...status.remember,
    ...standbyLeaderSlotActions(ctx),
    ...historyActions(ctx),
  );
  const restart = restartpointActions(ctx);
  actions.push(...restart.remember);
  if (ctx.paused) messages.push('PAUSE');
  const slot = remoteSlot(sc).slotName ?? null;
  const slotChanged = ctx.facts.upstreamSlotName !== undefined && (ctx.facts.upstreamSlotName ?? null) !== slot && remote !== null;
  if (ctx.facts.upstreamConnUrl !== (remote?.connUrl ?? null) || slotChanged) {
    messages[0] = `following ${source} as the standby leader (standby_cluster changed)`;
    actions.push({ type: 'follow', upstream: remote, ...remoteSlot(sc), timeoutMs: startTimeoutMs(ctx) });
    return decision(messages.join('; '), actions, { job: 'follow', wakeAt });
  }
  if (restart.checkpoint) {
    messages.push(`restartpoint: the control file shows timeline ${ctx.facts.checkpointTimeline}, the server follows timeline ${ctx.facts.timeline}`);
    return decision(messages.join('; '), [...actions, { type: 'checkpoint' }], { job: 'checkpoint', wakeAt });
  }
  return decision(messages.join('; '), actions, { wakeAt: earliest(wakeAt, restart.wakeAt) });
}

/** How often a standby leader asks for a restartpoint while its control file shows an older timeline than it follows. */
export function restartpointRetryMs(ctx: TickContext): number {
  return Math.max(10_000, ctx.loopWaitMs);
}

/**
 * A standby leader is a pg_rewind source for its replicas, and PostgreSQL 15's pg_rewind reads
 * the source's timeline from the last checkpoint in its control file: after the remote switched
 * timelines, the standby leader must make a restartpoint on the new one (CHECKPOINT, which
 * needs a checkpoint record of the remote on that timeline, so it is asked again every
 * restartpointRetryMs until it shows). Meanwhile its member record says so
 * (checkpointAfterPromote false), and rewinders wait, as after a primary's promotion.
 */
function restartpointActions(ctx: TickContext): { remember: Action[]; checkpoint: boolean; wakeAt: number | null } {
  const cp = ctx.facts.checkpointTimeline;
  const tl = ctx.facts.timeline;
  const ready = cp === undefined || cp === null || tl === null || cp >= tl;
  const memory = ctx.input.memory;
  const published: boolean | null = ready ? null : false;
  const remember: Action[] = memory.checkpointAfterPromote === published ? [] : [{ type: 'remember', patch: { checkpointAfterPromote: published } }];
  if (ready) return { remember, checkpoint: false, wakeAt: null };
  const last = memory.restartpointAt ?? null;
  const next = last === null ? ctx.now : last + restartpointRetryMs(ctx);
  if (ctx.now < next) return { remember, checkpoint: false, wakeAt: next };
  return { remember: [...remember, { type: 'remember', patch: { restartpointAt: ctx.now } }], checkpoint: true, wakeAt: null };
}
