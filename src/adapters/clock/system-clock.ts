import type { Clock } from '../../ports/clock.js';

/** Longest delay a Node timer takes; a longer one fires after 1 ms (and warns), which would spin a loop. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The real wall clock and timers. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, Math.min(MAX_TIMER_MS, Math.max(0, ms)));
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  turn(): Promise<void> {
    // Two immediates: one queued from a socket's callback (the poll phase) runs in the check phase of
    // the same iteration, before any timer that fell due and any socket that became readable
    // meanwhile. The second, queued from the check phase, runs after the next iteration's timers and poll.
    return new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
  }
}
