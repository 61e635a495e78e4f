/** The finite values of `xs`: a run that could not measure a figure records NaN and is left out. */
function finite(xs: readonly number[]): number[] {
  return xs.filter((x) => Number.isFinite(x));
}

/** Middle value of `xs` (mean of the two middle values for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  return percentile(xs, 50);
}

/** Linear-interpolated percentile `p` (0..100) of `xs`; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  const s = finite(xs).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

/** Largest value of `xs`; NaN when empty. */
export function max(xs: readonly number[]): number {
  const s = finite(xs);
  return s.length === 0 ? Number.NaN : Math.max(...s);
}

/** Arithmetic mean of `xs`; NaN when empty. */
export function mean(xs: readonly number[]): number {
  const s = finite(xs);
  return s.length === 0 ? Number.NaN : s.reduce((a, b) => a + b, 0) / s.length;
}
