// The noise rule of a QA search: the incumbent and a candidate answered the same train questions at the same seeds,
// so their comparison is paired, question by question. A candidate clears the incumbent only when the 95% Student t
// interval of the mean per-question difference lies above zero: a gain of one or two questions that the variation
// between questions explains is not promoted; nor is one the exact sign test over the questions that differ does not
// bear out at the same level (identical gains give the t interval no width). With several candidates compared with the same incumbent in a round
// (the best of them wins), the interval is Bonferroni-corrected over them. `--noise-repeats 1` turns the rule off
// (strictly better train mean), as it does on discovery tasks. Questions either side failed for infrastructure
// reasons are left out of the pairs.
import { mean, sampleSd, signTestP, tCritical } from "../measure/stats.ts";

/** Per-question scores of one measurement: task id → score, null where the infrastructure failed. */
export type PerQuestion = Readonly<Record<string, number | null>>;

export interface PairedComparison {
  rule: "paired_t_interval" | "strictly_better";
  better: boolean;
  /** Questions both sides have a score on. */
  n: number;
  /** The mean of candidate − incumbent over those questions (positive: the candidate is better). */
  difference: number;
  /** The half-width the difference must exceed (0 for strictly_better; infinite with fewer than two pairs). */
  margin: number;
  interval: [number, number];
  reason: string;
}

const fmt = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(6)).toString() : String(x));

/** The per-question differences candidate − incumbent, in the incumbent's question order. */
export function pairedDifferences(candidate: PerQuestion, incumbent: PerQuestion): number[] {
  const out: number[] = [];
  for (const [task, b] of Object.entries(incumbent)) {
    const c = candidate[task];
    if (b !== null && c !== null && c !== undefined) out.push(c - b);
  }
  return out;
}

/**
 * The exact sign test over the questions that differ, at the interval's level: when every gain is the same (4 of 4
 * questions gained) the t interval has no width and lies above zero, though a fair coin gives that split 1 time in 8.
 */
function signTest(d: readonly number[], alpha: number): { agrees: boolean; says: string } {
  const gained = d.filter((x) => x > 0).length;
  const differ = d.filter((x) => x !== 0).length;
  const p = signTestP(gained, differ);
  // Two-sided: significant with more questions lost than gained is a disagreement (a few large gains, many losses).
  const most = 2 * gained > differ;
  return {
    agrees: most && p < alpha,
    says: most
      ? `${gained} of ${differ} differing questions gained: sign test p = ${fmt(p)} ≥ ${fmt(alpha)}`
      : `only ${gained} of ${differ} differing questions gained (sign test p = ${fmt(p)})`,
  };
}

/**
 * Whether a candidate clears the incumbent on the same questions: with `noise`, mean(d) − t₀.₉₇₅(n−1)·sd(d)/√n > 0
 * (sd the sample standard deviation of the differences d) and the sign test agrees; without it, mean(d) > 0.
 */
export function clearsPairedNoise(
  candidate: PerQuestion,
  incumbent: PerQuestion,
  o: { noise: boolean; comparisons?: number },
): PairedComparison {
  const d = pairedDifferences(candidate, incumbent);
  const n = d.length;
  const diff = n ? mean(d) : Number.NaN;
  if (n === 0)
    return {
      rule: o.noise ? "paired_t_interval" : "strictly_better",
      better: false,
      n,
      difference: diff,
      margin: Number.POSITIVE_INFINITY,
      interval: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY],
      reason: "no question has a score on both sides",
    };
  if (!o.noise) {
    const better = diff > 0;
    const reason = `mean gain ${fmt(diff)} over ${n} paired questions ${better ? "is above" : "is not above"} 0`;
    return { rule: "strictly_better", better, n, difference: diff, margin: 0, interval: [diff, diff], reason };
  }
  const alpha = 0.05 / Math.max(1, o.comparisons ?? 1);
  const margin = n < 2 ? Number.POSITIVE_INFINITY : (tCritical(n - 1, alpha) * sampleSd(d)) / Math.sqrt(n);
  const interval: [number, number] = [diff - margin, diff + margin];
  const sign = signTest(d, alpha);
  const better = interval[0] > 0 && sign.agrees;
  const level = alpha === 0.05 ? "95%" : `${fmt(100 * (1 - alpha))}% (Bonferroni over ${o.comparisons} candidates)`;
  const verdict = interval[0] > 0 ? (sign.agrees ? "above 0" : `above 0, but ${sign.says}`) : "includes or is below 0";
  const reason =
    n < 2
      ? "one paired question: the noise cannot be measured (--noise-repeats 1 compares single scores)"
      : `mean gain ${fmt(diff)} over ${n} paired questions, ${level} interval [${fmt(interval[0])}, ${fmt(interval[1])}] ${verdict}`;
  return { rule: "paired_t_interval", better, n, difference: diff, margin, interval, reason };
}
