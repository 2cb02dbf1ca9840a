import { rng } from "../rng.ts";
import { mean, sampleSd, tCritical, tCritical95 } from "./stats.ts";

export type Direction = "maximize" | "minimize";

/**
 * The outcome of comparing a candidate's scores with a baseline's under one rule. `difference` is signed by the
 * direction (positive: the candidate is better); `better` is whether it clears the baseline under the rule.
 */
export interface Comparison {
  rule: "strictly_better" | "welch_interval";
  better: boolean;
  difference: number;
  /** The half-width the difference must exceed (0 for strictly_better), and the interval it gives. */
  margin: number;
  interval: [number, number];
  candidate: { n: number; mean: number };
  baseline: { n: number; mean: number };
  /**
   * Where several candidates were compared with one baseline (a round's), the Bonferroni-corrected interval that
   * decided `better`: at level 1 − 0.05/comparisons, so that the round promotes noise no more often than one
   * comparison at 95% would. `interval` and `margin` stay the 95% ones.
   */
  family?: { comparisons: number; confidence: number; margin: number; interval: [number, number] };
  reason: string;
}

const fmt = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(6)).toString() : String(x));
const signOf = (d: Direction) => (d === "maximize" ? 1 : -1);

/** One score against another (a deterministic evaluator): the candidate must be strictly better. */
export function strictlyBetter(candidate: number, baseline: number | undefined, direction: Direction): Comparison {
  if (baseline === undefined)
    return {
      rule: "strictly_better",
      better: true,
      difference: Number.POSITIVE_INFINITY,
      margin: 0,
      interval: [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY],
      candidate: { n: 1, mean: candidate },
      baseline: { n: 0, mean: Number.NaN },
      reason: `${fmt(candidate)} against no valid baseline`,
    };
  const d = signOf(direction) * (candidate - baseline);
  return {
    rule: "strictly_better",
    better: d > 0,
    difference: d,
    margin: 0,
    interval: [d, d],
    candidate: { n: 1, mean: candidate },
    baseline: { n: 1, mean: baseline },
    reason: `${fmt(candidate)} ${d > 0 ? "beats" : "does not beat"} ${fmt(baseline)}`,
  };
}

/**
 * Repeated scores of a candidate against repeated scores of a baseline (a stochastic evaluator): Welch's 95%
 * interval of the difference of means must lie above zero. Each side's standard deviation is at least `floorSd`
 * (the noise measured on the seed), so a few repeats that happen to agree cannot shrink the margin below the
 * evaluator's known noise. With `comparisons` > 1 (that many candidates compared with the same baseline, the best of
 * which wins), the interval that must lie above zero is the Bonferroni-corrected one (`family`).
 */
export function clearsNoise(
  candidate: readonly number[],
  baseline: readonly number[],
  o: { direction: Direction; floorSd?: number; comparisons?: number },
): Comparison {
  const nc = candidate.length;
  const nb = baseline.length;
  const mc = mean(candidate);
  const mb = mean(baseline);
  const floor = o.floorSd ?? 0;
  const vc = Math.max(sampleSd(candidate), floor) ** 2 / nc;
  const vb = Math.max(sampleSd(baseline), floor) ** 2 / nb;
  const se = Math.sqrt(vc + vb);
  const df =
    nc < 2 || nb < 2 ? 1 : se === 0 ? Number.POSITIVE_INFINITY : (vc + vb) ** 2 / (vc ** 2 / (nc - 1) + vb ** 2 / (nb - 1));
  const margin = tCritical95(df) * se;
  const d = signOf(o.direction) * (mc - mb);
  const interval: [number, number] = [d - margin, d + margin];
  const family = familyInterval(d, df, se, o.comparisons ?? 1);
  const deciding = family?.interval ?? interval;
  const better = deciding[0] > 0;
  const level = family
    ? `${fmt(family.confidence * 100)}% interval (Bonferroni over ${family.comparisons} candidates)`
    : "95% interval";
  return {
    rule: "welch_interval",
    better,
    difference: d,
    margin,
    interval,
    candidate: { n: nc, mean: mc },
    baseline: { n: nb, mean: mb },
    ...(family ? { family } : {}),
    reason: `mean ${fmt(mc)} (n=${nc}) vs ${fmt(mb)} (n=${nb}): difference ${fmt(d)}, ${level} [${fmt(deciding[0])}, ${fmt(deciding[1])}] ${better ? "above 0" : "includes or is below 0"}`,
  };
}

/** The interval at level 1 − 0.05/comparisons, for more than one comparison. */
function familyInterval(d: number, df: number, se: number, comparisons: number): Comparison["family"] {
  if (!(comparisons > 1)) return undefined;
  const alpha = 0.05 / comparisons;
  const margin = se === 0 ? 0 : tCritical(df, alpha) * se;
  return { comparisons, confidence: 1 - alpha, margin, interval: [d - margin, d + margin] };
}

/** A paired bootstrap interval of the mean of per-item differences (candidate − baseline on the same items). */
export function pairedInterval(
  diffs: readonly number[],
  o: { confidence?: number; resamples?: number; seed?: number } = {},
): [number, number] {
  const b = o.resamples ?? 2000;
  const random = rng(o.seed ?? 0);
  const means: number[] = [];
  for (let i = 0; i < b; i++) {
    let sum = 0;
    for (let j = 0; j < diffs.length; j++) sum += diffs[Math.floor(random() * diffs.length)] as number;
    means.push(sum / diffs.length);
  }
  means.sort((x, y) => x - y);
  const alpha = (1 - (o.confidence ?? 0.95)) / 2;
  return [means[Math.floor(alpha * (b - 1))] as number, means[Math.ceil((1 - alpha) * (b - 1))] as number];
}
