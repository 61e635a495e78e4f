import { findMember } from '../model/cluster.js';
import { decision, needs, type Action, type Decision } from './decision.js';
import { demoteGraceful } from './demote.js';
import { eligibility } from '../rules/eligibility.js';
import { candidate } from './leader-race.js';
import { scheduleVerdict, switchoverScheduleFromKey } from '../rules/schedule.js';
import { electionContext, type TickContext } from './tick-context.js';

/** What the leader does about the failover key this tick. */
export type LeaderFailoverStep =
  | { readonly kind: 'none' }
  /** Not due yet: wake at `at`. */
  | { readonly kind: 'wait'; readonly at: number; readonly message: string }
  /** Kept, but not run while the cluster is paused (due again at its time after a resume, or dropped as stale). */
  | { readonly kind: 'held'; readonly message: string }
  /** Drop the key (`{}`): stale, mismatched or impossible. */
  | { readonly kind: 'clear'; readonly action: Action; readonly message: string }
  /** Peers are needed, or the graceful demotion runs. */
  | { readonly kind: 'decide'; readonly decision: Decision };

/**
 * Adds what a leader's step other than `decide` contributes to its tick (the action that
 * drops the key, the message) to `actions` and `messages`; returns when to wake for a step
 * not yet due, else null.
 */
export function applyLeaderStep(step: Exclude<LeaderFailoverStep, { kind: 'decide' }>, actions: Action[], messages: string[]): number | null {
  if (step.kind === 'none') return null;
  messages.push(step.message);
  if (step.kind === 'wait') return step.at;
  if (step.kind === 'held') return null;
  actions.push(step.action);
  return null;
}

/**
 * The leader's side of a manual switchover/failover (the `failover` key). A scheduled one is
 * kept but not run while paused (an operator's maintenance window does not cancel tonight's
 * switchover; it runs at its time after a resume, or is dropped as stale). The key is
 * dropped when it names another leader, is scheduled past its time,
 * names this node or a non-member as candidate, or asks for "any candidate" while paused.
 * Otherwise, once due, the leader steps down gracefully only if the candidate (or, without
 * one, some member) passes the healthy-standby rules; if nobody does, the key is dropped.
 */
export function failoverOnLeader(ctx: TickContext): LeaderFailoverStep {
  const fk = ctx.cluster.failover;
  if (!fk) return { kind: 'none' };
  const clear = (why: string): LeaderFailoverStep => ({
    kind: 'clear',
    action: { type: 'clearFailover', revision: fk.revision, reason: why },
    message: `failover key cleared: ${why}`,
  });
  if (fk.leader && fk.leader !== ctx.me) return clear(`it names ${fk.leader} as leader, but the leader is ${ctx.me}`);
  if (fk.scheduledAt !== null) {
    if (ctx.paused) return { kind: 'held', message: `switchover scheduled at ${fk.scheduledAt} held while paused` };
    const schedule = switchoverScheduleFromKey(fk);
    const at = schedule.kind === 'scheduled' ? schedule.at : Date.parse(fk.scheduledAt);
    if (Number.isNaN(at)) return clear(`unparseable scheduled_at ${JSON.stringify(fk.scheduledAt)}`);
    const verdict = scheduleVerdict(at, ctx.now, ctx.config.loop_wait);
    if (verdict === 'wait') return { kind: 'wait', at, message: `switchover scheduled at ${fk.scheduledAt}` };
    if (verdict === 'stale') return clear(`the scheduled switchover at ${fk.scheduledAt} missed its time`);
  }
  if (fk.member === ctx.me) return clear('the candidate is already the leader');
  if (fk.member && !findMember(ctx.cluster, fk.member)) return clear(`candidate ${fk.member} is not a member of the cluster`);
  if (!fk.member && ctx.paused) return clear('a switchover without candidate is not possible while paused');
  if (ctx.input.peers === null) return { kind: 'decide', decision: needs('peers', 'switchover requested: asking the candidates for their state') };
  const kind = fk.leader ? 'switchover' : 'failover';
  const rules = electionContext(ctx, kind, true);
  const pool = ctx.cluster.members.filter((m) => m.name !== ctx.me && (!fk.member || m.name === fk.member));
  const verdicts = pool.map((m) => eligibility(candidate(ctx, m), rules));
  const ok = verdicts.find((v) => v.eligible);
  if (!ok) {
    const detail = verdicts.map((v) => v.detail).join('; ') || 'no other member';
    return clear(`no eligible candidate (${detail})`);
  }
  const target = fk.member ? `to ${fk.member}` : 'to any eligible member';
  const demote = demoteGraceful(ctx, `${kind} ${target} requested`);
  // Refresh first: the key must stay ours until the server has stopped accepting writes.
  return {
    kind: 'decide',
    decision: decision(demote.message, [{ type: 'refreshLeader' }, ...demote.actions], { job: demote.job }),
  };
}
