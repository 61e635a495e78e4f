/** What the agent knows when it is asked to stop (SIGTERM). */
export interface ShutdownFacts {
  /** The cluster is in maintenance mode, as a read made for the shutdown shows (false when the read failed). */
  readonly paused: boolean;
  /** PostgreSQL runs. */
  readonly running: boolean;
  /** It runs in recovery (a replica or a standby leader); null when unknown. */
  readonly inRecovery: boolean | null;
  /** This member holds the leader lock. */
  readonly holdsLock: boolean;
}

/**
 * How the agent stops: `stop` PostgreSQL (and release the lock) as usual; `leave` it running
 * (a replica in maintenance mode: nothing to guard); `handover` the lock to the fencer and leave
 * it running (the leader in maintenance mode: the fencer stops it before the lock runs out
 * unless the node's next agent renews it). `why` says why a paused member is stopped anyway.
 */
export type ShutdownPlan = { readonly kind: 'stop'; readonly why: string | null } | { readonly kind: 'leave' } | { readonly kind: 'handover' };

/**
 * The shutdown of a member: outside maintenance mode, or with nothing running, PostgreSQL is
 * stopped. In maintenance mode it is left running so that the agent can be restarted or
 * upgraded without an outage, except a primary without the lock: once the agent is gone
 * nothing would guard it, and a resume could make another member primary beside it.
 */
export function shutdownPlan(f: ShutdownFacts): ShutdownPlan {
  if (!f.paused || !f.running) return { kind: 'stop', why: null };
  if (f.holdsLock) return { kind: 'handover' };
  if (f.inRecovery === true) return { kind: 'leave' };
  return { kind: 'stop', why: 'it runs (or may run) as a primary without the leader lock, and nothing would guard it once the agent is gone' };
}
