import type { Clock } from '../../ports/clock.js';

/** What a tick tells the scheduler. */
export interface ScheduledTickResult {
  /** Earliest moment the tick wants another one (epoch ms), or null. */
  readonly wakeAt: number | null;
  /** Run again at once (the lock was found lost). */
  readonly retick: boolean;
}

/** Reason given to an aborted sleep. */
const WAKE_REASON = 'wake';

/** Least time between the starts of two ticks woken by events (a lost lock re-ticks at once). */
const MIN_TICK_SPACING_MS = 50;

/** Fast re-ticks in a row after a lost lock, before falling back to the interval. */
const MAX_RETICKS = 3;

/**
 * Decides when the HA loop ticks: every `interval()` ms from the start of one tick to the start of
 * the next (loop_wait, read anew each time so a changed setting applies at the next sleep; a
 * tick longer than that is followed by the next at once), earlier when a tick asks for a moment, at once
 * when woken (a watch event, an operator command, a finished job) or when a tick found the
 * lock lost. Woken ticks are spaced a little, which bounds any feedback loop. Ticks never
 * overlap: `runExclusive` serializes them with ticks run from outside the loop.
 */
export class TickScheduler {
  private running = false;
  private loopDone: Promise<void> | null = null;
  private sleeper: AbortController | null = null;
  private wakeRequested = false;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly clock: Clock,
    private readonly interval: () => number,
    private readonly tick: () => Promise<ScheduledTickResult>,
  ) {}

  /** Starts ticking. Returns at once. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Stops ticking; resolves after the tick in progress (if any) ended. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loopDone;
    await this.chain;
  }

  /** Ticks as soon as the spacing allows. Never throws. */
  wake(): void {
    this.wakeRequested = true;
    // A fixed reason: the default one builds a DOMException (with a stack) on every wake.
    this.sleeper?.abort(WAKE_REASON);
  }

  /** Runs `fn` when no tick runs (the next tick waits for it). */
  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async loop(): Promise<void> {
    let reticks = 0;
    let lastStart = Number.NEGATIVE_INFINITY;
    while (this.running) {
      const since = this.clock.now() - lastStart;
      if (reticks === 0 && since < MIN_TICK_SPACING_MS) await this.clock.sleep(MIN_TICK_SPACING_MS - since);
      this.wakeRequested = false;
      lastStart = this.clock.now();
      const { wakeAt, retick } = await this.runExclusive(this.tick);
      if (!this.running) break;
      // loop_wait apart from start to start, as long as ticks are shorter: a leader's renewals keep their pace
      // when the DCS answers slowly, instead of drifting loop_wait plus a slow tick apart.
      let delay = Math.max(0, this.interval() - (this.clock.now() - lastStart));
      if (wakeAt !== null) delay = Math.min(delay, Math.max(0, wakeAt - this.clock.now()));
      if (retick && reticks < MAX_RETICKS) {
        reticks++;
        continue;
      }
      reticks = 0;
      if (this.wakeRequested) continue;
      // One controller serves every sleep until a wake aborts it.
      if (!this.sleeper || this.sleeper.signal.aborted) this.sleeper = new AbortController();
      await this.clock.sleep(delay, this.sleeper.signal);
    }
  }
}
