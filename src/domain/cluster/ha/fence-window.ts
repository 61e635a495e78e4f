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

/**
 * Why, in failsafe mode, the fencer would stop a primary every member confirms while etcd does
 * not answer (null: it would not). Each failsafe round extends the lock by ttl from its start;
 * the next one starts after one wait of retry_timeout on an etcd that does not answer (the
 * renewal, or the cluster read while renewals have failed for less than retry_timeout) and a
 * loop_wait, and takes the members' answers (a second or two), so the fencer's window must be
 * longer than loop_wait + retry_timeout.
 */
export function failsafeWindowProblem(ttlSeconds: number, loopWaitSeconds: number, retryTimeoutSeconds: number, safetyMarginSeconds: number): string | null {
  const window = ttlSeconds - safetyMarginSeconds;
  const round = loopWaitSeconds + retryTimeoutSeconds;
  if (window > round) return null;
  return (
    `with failsafe_mode, a round of confirmations comes every loop_wait plus a retry_timeout wait on an etcd that does not answer ` +
    `(${loopWaitSeconds} + ${retryTimeoutSeconds} = ${round} s, and the members' answers), and the fencer stops PostgreSQL ttl - safety_margin ` +
    `(${ttlSeconds} - ${safetyMarginSeconds} = ${window} s) after the last one: during an etcd outage it would stop the primary the members confirm; ` +
    'raise ttl, or lower loop_wait, retry_timeout or watchdog.safety_margin'
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
