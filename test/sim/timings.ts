import type { Random } from './random.js';

/**
 * ttl, loop_wait and retry_timeout as a schedule draws them (at its start, and when an operator
 * changes them): `quick` schedules keep loop_wait at 5 s. ttl leaves the fencer (safety margin
 * 5 s) a window longer than loop_wait, and room for two failing DCS calls.
 */
export function randomTimings(rnd: Random, quick: boolean): { readonly ttl: number; readonly loop_wait: number; readonly retry_timeout: number } {
  const loopWait = quick ? 5 : rnd.pick([1, 2, 5]);
  const retry = rnd.pick([3, 5]);
  const ttl = Math.max(20, loopWait + 2 * retry + rnd.pick([0, 5, 10]));
  return { ttl, loop_wait: loopWait, retry_timeout: retry };
}
