import type { Member } from '../model/cluster.js';

/**
 * How long the fencer (and a watchdog device) lets a leader go between two renewals of its
 * lock before it stops PostgreSQL: `ttl - watchdog.safety_margin` seconds, at least one.
 */
export function fenceWindowSeconds(ttlSeconds: number, safetyMarginSeconds: number): number {
  return Math.max(1, ttlSeconds - safetyMarginSeconds);
}

/**
 * Why `watchdog.safety_margin` would have a healthy primary stopped under this `ttl` and
 * `loop_wait` (null: it would not). A leader renews its lock once per loop, so the fencer's
 * window must be longer than loop_wait, or the fencer (and a watchdog device) fires between
 * two renewals of a primary that works.
 */
export function safetyMarginProblem(ttlSeconds: number, loopWaitSeconds: number, safetyMarginSeconds: number): string | null {
  if (ttlSeconds - safetyMarginSeconds > loopWaitSeconds) return null;
  return (
    `expected less than ttl - loop_wait (${ttlSeconds} - ${loopWaitSeconds} = ${ttlSeconds - loopWaitSeconds} s), got ${safetyMarginSeconds}: ` +
    'the fencer stops PostgreSQL safety_margin seconds before the leader lock would run out, and a healthy primary renews its lock once per loop_wait, ' +
    'so it would be stopped between two renewals; lower watchdog.safety_margin or raise ttl'
  );
}

/** A member whose fencer would stop its healthy primary, and why. */
export interface MemberFenceProblem {
  readonly member: string;
  readonly problem: string;
}

/** The members whose published safety_margin does not fit `ttl` and `loop_wait` (members that publish none are never fenced on a deadline). */
export function membersFencedBy(members: readonly Member[], ttlSeconds: number, loopWaitSeconds: number): MemberFenceProblem[] {
  const out: MemberFenceProblem[] = [];
  for (const m of members) {
    if (m.safetyMargin === undefined) continue;
    const problem = safetyMarginProblem(ttlSeconds, loopWaitSeconds, m.safetyMargin);
    if (problem !== null) out.push({ member: m.name, problem });
  }
  return out;
}
