/**
 * How often a failure that repeats is said again. The first occurrence says why; the same
 * failure is said again at its 4th, 16th, 64th... occurrence in a row (a reminder that thins
 * out: an outage of an hour at one attempt per loop leaves a handful of lines, not hundreds),
 * and at once when its reason changes.
 */
export function repeatLogged(count: number, reasonChanged: boolean): boolean {
  if (count <= 1 || reasonChanged) return true;
  // A power of four: one bit set, at an even position.
  return (count & (count - 1)) === 0 && (count & 0x55555555) !== 0;
}

/** The occurrence at which the same failure is said again after its `count`-th. */
export function nextLoggedRepeat(count: number): number {
  let next = 4;
  while (next <= count) next *= 4;
  return next;
}
