/**
 * This node's hold on the leader lock, in one place: the deadline the cluster store granted
 * with the last acquire or renewal (this node may act as leader until then, never longer),
 * and whether the current tick found the lock lost (the loop then decides again at once).
 */
export class LeaderLease {
  private until: number | null = null;
  /** Hears every change of the deadline (null: not held): the fencer guards it. */
  onChange: (deadline: number | null) => void = () => {};
  private lostInTick = false;
  private renewalErrorSince: number | null = null;
  private failsafeRoundAt: number | null = null;
  private forgotten = 0;

  /** The lock's deadline (epoch ms), or null when this node does not hold it. */
  get deadline(): number | null {
    return this.until;
  }

  /** Whether the lock is held at `now`. */
  heldAt(now: number): boolean {
    return this.until !== null && now < this.until;
  }

  /** The store granted (or renewed) the lock until `deadline`. */
  granted(deadline: number): void {
    this.renewalErrorSince = null;
    this.set(deadline);
  }

  /**
   * Marks a renewal about to be sent: `renewedSince(mark, ...)` then applies its answer only
   * if the lock was not given up meanwhile (a job released it while the renewal was on its way).
   */
  mark(): number {
    return this.forgotten;
  }

  /** The store renewed the lock until `deadline` in answer to a renewal sent at `mark`; ignored when the lock was given up since. */
  renewedSince(mark: number, deadline: number): void {
    if (mark === this.forgotten) this.granted(deadline);
  }

  /** The lock is given up or known gone. */
  forget(): void {
    this.forgotten++;
    this.renewalErrorSince = null;
    this.set(null);
  }

  /** A renewal failed with an error at `at` (the store did not answer): the lock may still be ours, but we may not keep it. */
  renewalFailed(at: number): void {
    this.renewalErrorSince ??= at;
    this.markLost();
  }

  /** Since when every renewal failed with an error (null: the last one succeeded). */
  get renewalFailingSince(): number | null {
    return this.renewalErrorSince;
  }

  /** A renewal failed or found the lock taken: decide again at once. */
  markLost(): void {
    this.lostInTick = true;
  }

  /** Starts a tick: nothing lost yet. */
  beginTick(): void {
    this.lostInTick = false;
  }

  /** Whether this tick found the lock lost. */
  get lost(): boolean {
    return this.lostInTick;
  }

  /** A failsafe round starts now: its success extends the lock from this moment. */
  failsafeRoundStarted(at: number): void {
    this.failsafeRoundAt = at;
  }

  /** Every failsafe member confirmed this primary: hold the lock for another ttl from the round's start. */
  extendByFailsafe(ttlSeconds: number): void {
    if (this.failsafeRoundAt !== null) this.set(this.failsafeRoundAt + ttlSeconds * 1000);
  }

  private set(deadline: number | null): void {
    const was = this.until;
    this.until = deadline;
    if (deadline !== null || was !== null) this.onChange(deadline);
  }
}
