/** What the agent knows of its fencer. */
export interface FencerStatus {
  /** `off`: disabled by configuration; `unavailable`: could not be started or reached; `idle`: attached, not guarding; `guarding`: watching a lock deadline. */
  readonly state: 'off' | 'unavailable' | 'idle' | 'guarding';
  /** Why it is unavailable, when it is. */
  readonly reason: string | null;
}

/**
 * The node's fencer: a separate process that stops PostgreSQL when the agent cannot act in
 * time (frozen, dead, cut off), so no primary outlives its leader lock. The agent tells it
 * every lock deadline it gets; the fencer stops PostgreSQL hard when the deadline minus the
 * safety margin passes without a newer one, and at once when the agent process dies (then
 * it also releases the lock the agent held). Every call returns promptly and never throws.
 */
export interface Fencer {
  /** Starts this node's fencer, or adopts the one running; false when none is available (see status). */
  attach(): Promise<boolean>;
  /** This node holds the leader lock until `deadline` (epoch ms). */
  guard(deadline: number): void;
  /** This node does not hold the lock (any more): nothing to guard. */
  unguard(): void;
  /** The agent stops cleanly: the fencer leaves without fencing. */
  detach(): Promise<void>;
  /**
   * The agent stops and leaves its primary running (maintenance mode): the fencer goes on
   * guarding the last lock deadline without an agent, until an agent for this node attaches
   * again, and stops PostgreSQL when the deadline minus the safety margin passes. Resolves
   * true once the fencer confirmed it guards; false (the fencer is off, unreachable or guards
   * nothing) means PostgreSQL must be stopped as usual. The agent is detached either way.
   */
  handover(): Promise<boolean>;
  /** The fencer's state now. */
  status(): FencerStatus;
  /** Hears every fencing stop the fencer reports (also one made while no agent was attached, on attach). */
  onFenced?(listener: (report: FencingReport) => void): void;
}

/** A fencing stop the fencer made: why, how long the stop took, whether PostgreSQL is down, and when (epoch ms on the agent's clock). */
export interface FencingReport {
  readonly reason: string;
  readonly durationMs: number;
  readonly stopped: boolean;
  readonly at: number;
}
/** Inversify token of the Fencer port. */
export const Fencer = Symbol.for('warden.Fencer');
