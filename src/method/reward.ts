/**
 * Rewards for the proposer, from what each candidate's rollout achieved.
 *
 * Gap-normalised reward of a candidate whose rollout reached `score` (direction-aware, sign s = +1 to maximise,
 * -1 to minimise), against the incumbent's score b and the task's reference value ref:
 *
 *     r = clamp( s * (score - b) / gap, -1, 1 ),   gap = |ref - b|  when a reference exists and differs from b,
 *                                                   gap = max(|b|, 1e-9) otherwise (relative improvement).
 *
 * Reaching the reference earns 1; no change earns 0; an invalid or failed rollout, and an invalid or repaired
 * proposal, earn REWARD_MIN = -1. With --paired the baseline b is the score of the parent harness's rollout at the
 * same sampling seed, so the credit is causal.
 *
 * Advantages within a round's group of K rewards r_1..r_K mix leave-one-out baselines with a sharpening toward the
 * group's best:
 *
 *     A_k = 0.7 * (r_k - mean_{j != k} r_j) + 0.3 * (K * softmax(r / 0.1)_k - 1)
 *
 * The first term is the RLOO advantage (unbiased, mean zero); the second (also mean zero) adds weight to the
 * best candidates, as SAH does with its 0.7/0.3 mix. A group of one has advantage 0.
 */
export const REWARD_MIN = -1;
export const REWARD_MAX = 1;
export const LOO_WEIGHT = 0.7;
export const SHARPEN_WEIGHT = 0.3;
export const SHARPEN_TEMPERATURE = 0.1;

export type Direction = "maximize" | "minimize";

export function gap(baseline: number, reference: number | undefined): number {
  if (reference !== undefined && Math.abs(reference - baseline) > 1e-12) return Math.abs(reference - baseline);
  return Math.max(Math.abs(baseline), 1e-9);
}

export function gapReward(
  score: number | undefined,
  baseline: number | undefined,
  reference: number | undefined,
  direction: Direction,
): number {
  if (score === undefined || !Number.isFinite(score)) return REWARD_MIN;
  if (baseline === undefined) return REWARD_MAX;
  const sign = direction === "maximize" ? 1 : -1;
  const r = (sign * (score - baseline)) / gap(baseline, reference);
  return Math.min(REWARD_MAX, Math.max(REWARD_MIN, r));
}

export function advantages(rewards: readonly number[]): number[] {
  const k = rewards.length;
  if (k <= 1) return rewards.map(() => 0);
  const sum = rewards.reduce((a, b) => a + b, 0);
  const max = Math.max(...rewards);
  const exps = rewards.map((r) => Math.exp((r - max) / SHARPEN_TEMPERATURE));
  const z = exps.reduce((a, b) => a + b, 0);
  return rewards.map((r, i) => {
    const loo = r - (sum - r) / (k - 1);
    const sharpen = (k * (exps[i] as number)) / z - 1;
    return LOO_WEIGHT * loo + SHARPEN_WEIGHT * sharpen;
  });
}
