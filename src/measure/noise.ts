import { mean, sampleSd } from "./stats.ts";

/**
 * How much an evaluator's score varies for one program. `stochastic` is what the comparison rules act on:
 * declared by the task (`stochastic: true|false` in hone.yaml), or measured by repeating the seed's evaluation.
 */
export interface NoiseEstimate {
  stochastic: boolean;
  /**
   * declared by the task; measured by repeats; not_measured when repeats are disabled (--noise-repeats 1); refuted
   * when the seed's repeats agreed but a later re-evaluation of a program gave another score (`refuteDeterminism`).
   */
  basis: "declared" | "measured" | "not_measured" | "refuted";
  /** Evaluations made, and how many of them were invalid. */
  n: number;
  invalid: number;
  /** Over the valid scores: mean, sample standard deviation and spread (max − min); null without a valid score. */
  mean: number | null;
  sd: number;
  spread: number;
}

/** One evaluation's outcome as the repeat rule sees it: a valid score, or null for an invalid evaluation. */
export type RepeatScore = number | null;

/**
 * Two scores are the same when they are equal numbers: to the last bit, except that 0 and −0 are one score (the
 * records keep no sign of zero: SQLite stores −0.0 as 0 and JSON writes it as 0, so a resumed or replayed run reads
 * back 0 where the evaluator said −0.0).
 */
const sameScore = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));
const same = (a: RepeatScore, b: RepeatScore) => (a === null ? b === null : b !== null && sameScore(a, b));

/**
 * The repeat rule: how many times to evaluate a program to know its noise, up to `repeats`.
 * - declared `stochastic: false`, or `repeats` 1: one evaluation, nothing repeated;
 * - declared `stochastic: true`: all `repeats`;
 * - unknown: stop after two evaluations that agree bit for bit (same validity, same score to the last bit), else
 *   all `repeats`. A deterministic evaluator therefore costs one evaluation more per run, once, on the seed.
 */
export function needsAnotherRepeat(scores: readonly RepeatScore[], o: { repeats: number; declared?: boolean }): boolean {
  if (scores.length === 0) return true;
  if (scores.length >= o.repeats || o.declared === false) return false;
  if (o.declared === true) return true;
  return !(scores.length >= 2 && same(scores[0] as RepeatScore, scores[1] as RepeatScore));
}

/** The noise estimate from a program's repeated scores, under the same rule as needsAnotherRepeat. */
export function estimateNoise(scores: readonly RepeatScore[], o: { repeats: number; declared?: boolean }): NoiseEstimate {
  const valid = scores.filter((s): s is number => s !== null);
  const allSame = scores.every((s) => same(s, scores[0] ?? null));
  const basis = o.declared !== undefined ? "declared" : o.repeats <= 1 || scores.length < 2 ? "not_measured" : "measured";
  return {
    stochastic: o.declared ?? (basis === "measured" && !allSame),
    basis,
    n: scores.length,
    invalid: scores.length - valid.length,
    mean: valid.length ? mean(valid) : null,
    sd: sampleSd(valid),
    spread: valid.length ? Math.max(...valid) - Math.min(...valid) : 0,
  };
}

/**
 * An evaluator measured deterministic on the seed, refuted by a program whose re-evaluations (`scores`: the score
 * it was promoted on, then its re-evaluations, null for an invalid one) do not all agree: from now on stochastic,
 * with the spread of those scores as the noise floor (never below the seed's).
 */
export function refuteDeterminism(seed: NoiseEstimate, scores: readonly RepeatScore[]): NoiseEstimate {
  const valid = scores.filter((s): s is number => s !== null);
  const sd = Math.max(seed.sd, sampleSd(valid));
  const spread = valid.length ? Math.max(...valid) - Math.min(...valid) : 0;
  return { ...seed, stochastic: true, basis: "refuted", sd, spread: Math.max(seed.spread, spread) };
}

/**
 * Whether a program's re-evaluations confirm the single score it would be promoted on: every one valid and equal
 * to it bit for bit. Anything else refutes a measured deterministic evaluator.
 */
export const reproduces = (score: number, again: readonly RepeatScore[]): boolean =>
  again.every((s) => s !== null && sameScore(s, score));

const fmt = (x: number) => Number(x.toPrecision(4)).toString();

/** One line for people: what the evaluator's noise is and where that comes from. */
export function describeNoise(n: NoiseEstimate & { repeats?: number }): string {
  const kind = n.stochastic ? "stochastic" : "deterministic";
  const where =
    n.basis === "declared"
      ? "declared by the task"
      : n.basis === "not_measured"
        ? "not measured (--noise-repeats 1)"
        : n.basis === "refuted"
          ? `the seed program's ${n.n} evaluations agreed, but a re-evaluation of a candidate's program gave another score`
          : `measured on ${n.n} evaluations of the seed program`;
  const spread = n.stochastic || n.basis === "measured" ? `, sd ${fmt(n.sd)}, spread ${fmt(n.spread)}` : "";
  return `${kind} (${where}${spread})`;
}
