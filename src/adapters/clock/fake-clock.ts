import type { Clock } from '../../ports/clock.js';

interface Sleeper {
  readonly due: number;
  readonly seq: number;
  readonly resolve: () => void;
  readonly detach: () => void;
}

/** Lets every queued microtask (and promise chain fed by them) run before returning. */
export function flushMicrotasks(): Promise<void> {
  // setImmediate runs only once the microtask queue is empty, however deep the chain.
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock that only moves when a test says so. Sleepers wake in due-time order (ties in
 * the order they started sleeping), with microtasks flushed after each wake-up so the
 * async code behind one sleeper runs, and may sleep again, before the next one wakes.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private sleepers: Sleeper[] = [];

  /** `startMs`: initial epoch milliseconds (default 2024-01-01T00:00:00Z, so dates are stable). */
  constructor(startMs = Date.UTC(2024, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  /** Jumps to `ms` without waking anyone; refuses to go backwards (time never does). */
  set(ms: number): void {
    if (ms < this.current) throw new RangeError(`FakeClock cannot go back from ${this.current} to ${ms}`);
    this.current = ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    if (!(ms > 0)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const onAbort = () => {
        this.remove(sleeper);
        resolve();
      };
      const sleeper: Sleeper = {
        due: this.current + ms,
        seq: this.seq++,
        resolve,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.insert(sleeper);
    });
  }

  /** Number of sleeps not yet resolved nor aborted. */
  get pendingSleepers(): number {
    return this.sleepers.length;
  }

  /** Due time of the earliest sleeper, or null when nobody sleeps. */
  nextWakeAt(): number | null {
    return this.sleepers[0]?.due ?? null;
  }

  /**
   * Moves time forward by `ms`, waking due sleepers one at a time in time order; sleeps
   * started by the woken code that fall due within the window also wake. Resolves once
   * time is at the target and microtasks have settled.
   */
  async advance(ms: number): Promise<void> {
    if (ms < 0) throw new RangeError('FakeClock.advance needs a non-negative duration');
    const target = this.current + ms;
    await flushMicrotasks();
    for (;;) {
      const next = this.sleepers[0];
      if (!next || next.due > target) break;
      this.sleepers.shift();
      this.current = Math.max(this.current, next.due);
      next.detach();
      next.resolve();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  /** Advances to the earliest sleeper's due time and wakes it (and any due at the same time); false when nobody sleeps. */
  async advanceToNext(): Promise<boolean> {
    const due = this.nextWakeAt();
    if (due === null) return false;
    await this.advance(Math.max(0, due - this.current));
    return true;
  }

  private insert(s: Sleeper): void {
    // Binary search keeps the list sorted by (due, seq) with O(log n) comparisons.
    let lo = 0;
    let hi = this.sleepers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.sleepers[mid]!;
      if (m.due < s.due || (m.due === s.due && m.seq < s.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.sleepers.splice(lo, 0, s);
  }

  private remove(s: Sleeper): void {
    const i = this.sleepers.indexOf(s);
    if (i >= 0) this.sleepers.splice(i, 1);
  }
}
