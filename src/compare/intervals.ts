import { type Direction, pairedInterval } from "../measure/compare.ts";
import { mean, sampleSd, tQuantile } from "../measure/stats.ts";

export type Interval = [number, number];
export type IntervalKind = "t" | "bootstrap";

/** A mean with its 95% Student t interval over n values (no interval below two). */
export interface Estimate {
  n: number;
  mean: number | null;
  ci95: Interval | null;
}

/** +1 when higher scores are better, −1 when lower are: differences times this are positive when better. */
export const signOf = (d: Direction) => (d === "maximize" ? 1 : -1);

/**
 * The mean and its two-sided 95% Student t interval (df = n − 1, the exact quantile: scipy's `t.interval(0.95, n - 1,
 * mean, sem)`); no interval for fewer than two values.
 */
export function tInterval(xs: readonly number[]): Estimate {
  const n = xs.length;
  if (n === 0) return { n, mean: null, ci95: null };
  const m = mean(xs);
  if (n < 2) return { n, mean: m, ci95: null };
  const half = (tQuantile(n - 1, 0.05) * sampleSd(xs)) / Math.sqrt(n);
  return { n, mean: m, ci95: [m - half, m + half] };
}

/** The paired interval of a mean difference: Student t, or the paired bootstrap of measure/compare.ts (seed 0). */
export function differenceInterval(diffs: readonly number[], kind: IntervalKind): Interval | null {
  if (diffs.length < 2) return null;
  return kind === "t" ? tInterval(diffs).ci95 : pairedInterval(diffs, { seed: 0 });
}
