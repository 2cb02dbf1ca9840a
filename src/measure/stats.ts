/** Small statistics for measurement rules: means, sample standard deviations and Student t critical values. */

/** The arithmetic mean; exactly the common value when every value is the same (no rounding from summing). */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const first = xs[0] as number;
  if (xs.every((x) => Object.is(x, first))) return first;
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** The sample standard deviation (n − 1 in the denominator); 0 for fewer than two values. */
export function sampleSd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

// t such that P(T ≤ t) = 0.975 for Student's t with df = 1..30 degrees of freedom (two-sided 95%).
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101,
  2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
const T975_LARGE: [number, number][] = [
  [120, 1.98],
  [60, 2.0],
  [40, 2.021],
];

/**
 * The two-sided 95% critical value of Student's t. A fractional df (Welch) is rounded down, which can only widen
 * the interval; df above 30 uses the value at the largest tabulated df not above it, and 1.96 beyond 120.
 */
export function tCritical95(df: number): number {
  if (!Number.isFinite(df)) return 1.96;
  const d = Math.max(1, Math.floor(df + 1e-9));
  if (d <= 30) return T975[d - 1] as number;
  for (const [at, t] of T975_LARGE) if (d >= at) return t;
  return T975[29] as number;
}
