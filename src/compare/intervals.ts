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

/** The mean of finite values, finite however large they are (the plain sum of 1.5e308 and 1e308 is not). */
export function meanOf(xs: readonly number[]): number {
  const m = mean(xs);
  if (Number.isFinite(m) || !xs.every(Number.isFinite)) return m;
  return xs.reduce((a, x) => a + x / xs.length, 0);
}

// Values past this are divided by a power of two before any statistic (exact: only their exponents change), so that
// sums, squares and differences of scores near ±1.8e308 stay finite; below it nothing changes.
const HUGE = 2 ** 500;

/** The power of two that brings values past 2^500 in magnitude down to [1, 2); 1 for all others. */
export function scaleOf(xs: readonly number[]): number {
  const top = xs.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
  return Number.isFinite(top) && top > HUGE ? 2 ** Math.floor(Math.log2(top)) : 1;
}

const clampDouble = (v: number) => Math.min(Number.MAX_VALUE, Math.max(-Number.MAX_VALUE, v));

/** A scaled value back in its own units, held within the doubles (an interval end past ±1.8e308 ends there). */
export const unscale = (v: number, scale: number) => (scale === 1 ? v : clampDouble(v * scale));

/** An estimate made on values divided by `scale`, back in their own units. */
export function unscaleEstimate(e: Estimate, scale: number): Estimate {
  if (scale === 1) return e;
  return {
    n: e.n,
    mean: e.mean === null ? null : unscale(e.mean, scale),
    ci95: e.ci95 && [unscale(e.ci95[0], scale), unscale(e.ci95[1], scale)],
  };
}

/**
 * The mean and its two-sided 95% Student t interval (df = n − 1, the exact quantile: scipy's `t.interval(0.95, n - 1,
 * mean, sem)`); no interval for fewer than two values.
 */
export function tInterval(xs: readonly number[]): Estimate {
  const scale = scaleOf(xs);
  return scale === 1 ? tIntervalOf(xs) : unscaleEstimate(tIntervalOf(xs.map((x) => x / scale)), scale);
}

function tIntervalOf(xs: readonly number[]): Estimate {
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
  if (kind === "t") return tInterval(diffs).ci95;
  const scale = scaleOf(diffs);
  const [lo, hi] = pairedInterval(
    diffs.map((d) => d / scale),
    { seed: 0 },
  );
  return [unscale(lo, scale), unscale(hi, scale)];
}
