import type { CallbackRunner } from '../../ports/callbacks.js';
import type { Clock } from '../../ports/clock.js';

/**
 * How long the agent's exit waits at most for the callback its shutdown started (on_stop).
 * Patroni does not wait for callbacks, and neither does the exit beyond this: the process is
 * already running when run() returns (it is spawned at once), and it outlives the agent in a
 * process group of its own. The wait lets a short script (moving a VIP, deregistering a
 * service) end while the agent still reads its output, logs how it ended and counts a failure;
 * after the agent exited, a script that still writes output would get SIGPIPE.
 */
export const SHUTDOWN_CALLBACK_GRACE_MS = 3000;

/** Resolves true once no callback runs, false when `ms` passed first. Never rejects. */
export async function callbacksEndWithin(callbacks: CallbackRunner, clock: Clock, ms: number): Promise<boolean> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      callbacks.idle().then(
        () => true,
        () => true,
      ),
      clock.sleep(ms, timer.signal).then(() => false),
    ]);
  } finally {
    timer.abort();
  }
}
