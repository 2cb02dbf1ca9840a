import type { Direction } from "../measure/compare.ts";
import type { CurvePoint } from "./cell.ts";
import { meanOf } from "./intervals.ts";

/** The best-so-far over seeds at one x: how many seeds have a point by then, their mean, lowest and highest. */
export interface BandPoint {
  x: number;
  n: number;
  mean: number;
  min: number;
  max: number;
}

/** A step function: at each x where the best so far changes, its value (points in order of x, ties in order made). */
export function bestSoFar(points: readonly CurvePoint[], direction: Direction): { x: number; best: number }[] {
  const better = (a: number, b: number) => (direction === "maximize" ? a > b : a < b);
  const sorted = points.map((p, i) => ({ p, i })).sort((a, b) => a.p.x - b.p.x || a.i - b.i);
  const out: { x: number; best: number }[] = [];
  for (const { p } of sorted) {
    const last = out[out.length - 1];
    if (last && !better(p.score, last.best)) continue;
    if (last && last.x === p.x) last.best = p.score;
    else out.push({ x: p.x, best: p.score });
  }
  return out;
}

/**
 * The band over seeds on a shared x-axis: at every x where some seed's best so far changes, each seed's best so far
 * by then (step interpolation: its last change at or before x), averaged over the seeds that have one.
 */
export function curveBand(perSeed: readonly (readonly CurvePoint[])[], direction: Direction): BandPoint[] {
  const steps = perSeed.map((pts) => bestSoFar(pts, direction));
  const xs = [...new Set(steps.flatMap((s) => s.map((p) => p.x)))].sort((a, b) => a - b);
  const at = steps.map(() => -1);
  return xs.map((x) => {
    const values: number[] = [];
    steps.forEach((s, k) => {
      let i = at[k] as number;
      while (i + 1 < s.length && (s[i + 1] as { x: number }).x <= x) i++;
      at[k] = i;
      if (i >= 0) values.push((s[i] as { best: number }).best);
    });
    return { x, n: values.length, mean: meanOf(values), min: Math.min(...values), max: Math.max(...values) };
  });
}
