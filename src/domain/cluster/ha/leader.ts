import { finishBootstrap } from './bootstrap-leftovers.js';
import { decision, earliest, type Action, type Decision } from './decision.js';
import { demoteImmediate, releaseLock } from './demote.js';
import { applyLeaderStep, failoverOnLeader } from './manual-switchover.js';
import { leaderSlotActions, leaderStatus } from './slots.js';
import { takeLeadership } from './promotion.js';
import { standbyProgressStep, syncActions, syncStandbysLeftOut } from './sync-mode.js';
import type { TickContext } from './tick-context.js';
import { leaderWatchdogActions } from './watchdog-policy.js';

/**
 * The failsafe key the leader keeps: every member's api_url, so it can be asked when the DCS is
 * gone. Failsafe mode off, the leader (holding its lock through the DCS) empties it: the leader
 * race asks whoever it lists, to find a primary still writing on a lock failsafe extended.
 */
function failsafeActions(ctx: TickContext): Action[] {
  if (!ctx.config.failsafe_mode) return Object.keys(ctx.cluster.failsafe ?? {}).length ? [{ type: 'writeFailsafe', members: {} }] : [];
  const members: Record<string, string> = {};
  for (const m of ctx.cluster.members) if (m.apiUrl) members[m.name] = m.apiUrl;
  members[ctx.me] = ctx.input.node.apiUrl;
  const current = ctx.cluster.failsafe ?? {};
  const same = Object.keys(members).length === Object.keys(current).length && Object.entries(members).every(([k, v]) => current[k] === v);
  return same ? [] : [{ type: 'writeFailsafe', members }];
}

/**
 * A running primary holding the leader key: refresh the key (first: a failure stops the
 * sequence and the loop re-decides at once), keep the watchdog fed, publish the `status`
 * optime, manage synchronous replication, the failsafe key and the slots, and carry out a
 * requested switchover. After a promotion, a CHECKPOINT (PostgreSQL 15 only requests a
 * spread one, and pg_rewind reads the timeline from the control file it updates).
 */
export function leaderTick(ctx: TickContext): Decision {
  if (ctx.watchdogFailed && !ctx.paused) return demoteImmediate(ctx, 'the watchdog is required but not working', { release: true });
  const base: Action[] = [{ type: 'refreshLeader' }, ...leaderWatchdogActions(ctx)];
  const step = failoverOnLeader(ctx);
  if (step.kind === 'decide') return step.decision;
  const actions: Action[] = [...base];
  const messages: string[] = [`no action: I am ${ctx.me}, the leader with the lock`];
  const progress = standbyProgressStep(ctx);
  const wakeAt = earliest(applyLeaderStep(step, actions, messages), progress.wakeAt);
  const leftovers = finishBootstrap(ctx);
  actions.push(...leftovers.actions);
  messages.push(...leftovers.messages);
  const status = leaderStatus(ctx);
  actions.push({ type: 'writeStatus', optime: ctx.facts.walLocation ?? 0, slots: status.slots, retainSlots: status.retainSlots }, ...status.remember);
  actions.push(...failsafeActions(ctx), ...syncActions(ctx), ...progress.actions, ...leaderSlotActions(ctx));
  messages.push(...syncStandbysLeftOut(ctx));
  if (ctx.paused) messages.push('PAUSE');
  if (ctx.input.memory.checkpointAfterPromote === false) {
    // After the rest of the tick, in the background: the server is writable already.
    actions.push({ type: 'checkpoint' }, { type: 'remember', patch: { checkpointAfterPromote: true } });
    messages.push('checkpoint after the promotion');
    return decision(messages.join('; '), actions, { wakeAt, job: 'checkpoint' });
  }
  return decision(messages.join('; '), actions, { wakeAt });
}

/**
 * We hold the leader key but the server runs in recovery (it was started read-only
 * because we had the key, or a promotion did not finish): promote, unless paused (then
 * the key goes: the leader keeps it only while its server is primary), stepping down for
 * a switchover, or not allowed to lead.
 */
export function holdingLockAsReplica(ctx: TickContext): Decision {
  if (ctx.paused) return releaseLock(ctx, 'PAUSE: the server is not running as primary');
  const fk = ctx.cluster.failover;
  if (fk && fk.leader === ctx.me && fk.scheduledAt === null) return releaseLock(ctx, 'this node stepped down for a switchover');
  if (ctx.nofailover) return releaseLock(ctx, `this node is ${ctx.nofailoverReason}`);
  if (ctx.watchdogFailed) return releaseLock(ctx, 'the watchdog is required but not usable');
  return takeLeadership(ctx, { acquire: false, why: 'this node holds the leader key' });
}
