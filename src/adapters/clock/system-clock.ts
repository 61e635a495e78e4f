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
    // setImmediate runs after the poll phase: the sockets that became readable meanwhile are served first.
    return new Promise<void>((resolve) => setImmediate(resolve));
  }
}
