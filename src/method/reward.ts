/**
 * Rewards for the proposer, from what each candidate's rollout achieved.
 *
 * HarnessTTT, as its released code computes it (gray311/Self_Adapt_Harness at commit
 * bebde8e6f0c8c476ab4fab7cdeaafcedbb13df56, src/outer/reward/rewards.py: `task_reward_v2`, `compute_task_group_v2`,
 * `_rloo`, `_max_weights`; src/outer/proposing/propose.py: `parse_gate_mode`; config/campaign.yaml: `min6`):
 *
 * `softCapReward`, with s = +1 to maximise and −1 to minimise, the incumbent's (or, paired, the parent's) score b and
 * the task's reference value ref:
 *
 *     when ref is better than b (s·(ref − b) > 1e-9):  r = s·(score − b) / |ref − b|,
 *                                                      reward = 3·tanh(r/3) if r > 0, else max(−1, r)
 *     otherwise (no reference, or b has passed it):    reward = clip(s·(score − b) / (|b| + 1e-9), −1, 5)
 *
 * The soft cap keeps winners ranked (a hard clip at +1 made two above-reference candidates tie); reaching the
 * reference earns 3·tanh(1/3) ≈ 0.965. An invalid or failed rollout, and an invalid or repaired proposal, earn
 * REWARD_MIN = −1 (SAH scores a failed rollout as 0, which is meaningless for minimised or negative metrics).
 *
 * `groupAdvantages` over a round's K slots (rewards r, `valid` = the proposal passed the gate, repaired slots included
 * and charged −1): a slot is *credited* when it is valid and, with `measured: false` not set, its rollout gave a
 * score. Let R be the range (max − min) of the credited slots' rewards.
 * - zero signal: every slot credited and R < 1e-3 → every advantage is 0 (no update);
 * - ties: R < 1e-3 but some slot not credited → the credited rewards are replaced by their mean (only
 *   credited-vs-not remains);
 * - otherwise A_k = 0.7·(r_k − mean_{j≠k} r_j) + 0.3·(softmax(r/τ)_k − 1/K), τ = max(R/4, 1e-6).
 * Unpaired, every valid slot is credited (SAH's `compute_task_group_v2` keys the range on proposal validity, a failed
 * rollout included). Paired, a valid proposal whose candidate rollout gave no score is `measured: false`: it is
 * charged −1 but, as SAH's `compute_task_group_paired` keys the range on `attribution_valid`, it neither widens R
 * (which would flatten the sharpening toward the best) nor breaks a tie among the measured slots.
 * `proposalGate`: a round with fewer valid proposals than `min` (default ⌈6K/8⌉, SAH's min6 of K = 8) has failed.
 *
 * A group of one has advantage 0. With --paired the baseline b is the score of the parent harness's rollout at the
 * same sampling seed, so the credit is causal. (hone's first rule, a hard clip to [−1, 1] with a fixed softmax
 * temperature of 0.1, tied every candidate past the reference; it is gone.)
 */
export const REWARD_MIN = -1;
export const REWARD_MAX = 1;
export type Direction = "maximize" | "minimize";

export const SOFT_CAP = 3;
export const RELATIVE_CLIP_HIGH = 5;
export const ZERO_RANGE_EPS = 1e-3;
export const SHARPEN_ALPHA = 0.3;
const EPS = 1e-9;

/** HarnessTTT's reward of one rollout (see the header). */
export function softCapReward(
  score: number | undefined,
  baseline: number | undefined,
  reference: number | undefined,
  direction: Direction,
): number {
  if (score === undefined || !Number.isFinite(score)) return REWARD_MIN;
  if (baseline === undefined || !Number.isFinite(baseline)) return REWARD_MAX;
  const sign = direction === "maximize" ? 1 : -1;
  if (reference !== undefined && Number.isFinite(reference) && sign * (reference - baseline) > EPS) {
    const r = (sign * (score - baseline)) / Math.abs(reference - baseline);
    return r > 0 ? SOFT_CAP * Math.tanh(r / SOFT_CAP) : Math.max(REWARD_MIN, r);
  }
  const r = (sign * (score - baseline)) / (Math.abs(baseline) + EPS);
  return Math.max(REWARD_MIN, Math.min(RELATIVE_CLIP_HIGH, r));
}

export interface GroupSlot {
  reward: number;
  /** The proposal passed the gate (a repaired one too). */
  valid: boolean;
  /** Written by the repair step rather than the proposer: always charged REWARD_MIN. */
  repaired?: boolean;
  /**
   * false: a valid proposal whose rollout gave no creditable score (paired: no candidate score to set against its
   * control). Its reward stands (REWARD_MIN), but it is left out of the range, the tie collapse and the zero-signal
   * test, as SAH's paired rule leaves it out. Default true (SAH's unpaired rule).
   */
  measured?: boolean;
}

export interface GroupAdvantages {
  /** The rewards credited (after the repaired charge and the tie collapse). */
  rewards: number[];
  advantages: number[];
  mode: "no_signal" | "rloo+max";
  tau: number;
}

/** HarnessTTT's group advantages (SAH's `compute_task_group_v2`; see the header). */
export function groupAdvantages(slots: readonly GroupSlot[], o: { alpha?: number; zeroRangeEps?: number } = {}): GroupAdvantages {
  const alpha = o.alpha ?? SHARPEN_ALPHA;
  const eps = o.zeroRangeEps ?? ZERO_RANGE_EPS;
  const rewards = slots.map((s) => (s.repaired ? REWARD_MIN : s.reward));
  const credited = (s: GroupSlot) => s.valid && s.measured !== false;
  const valid = rewards.filter((_, i) => credited(slots[i] as GroupSlot));
  const range = valid.length ? Math.max(...valid) - Math.min(...valid) : 0;
  const allValid = slots.every(credited);
  const noSignal = allValid && range < eps;
  if (valid.length && range < eps && !allValid) {
    const vm = valid.reduce((a, b) => a + b, 0) / valid.length;
    slots.forEach((s, i) => {
      if (credited(s)) rewards[i] = vm;
    });
  }
  slots.forEach((s, i) => {
    if (s.repaired) rewards[i] = REWARD_MIN;
  });
  const tau = Math.max(range / 4, 1e-6);
  if (noSignal) return { rewards, advantages: rewards.map(() => 0), mode: "no_signal", tau };
  const k = rewards.length;
  const total = rewards.reduce((a, b) => a + b, 0);
  const max = Math.max(...rewards);
  const exps = rewards.map((r) => Math.exp((r - max) / Math.max(tau, EPS)));
  const z = exps.reduce((a, b) => a + b, 0);
  const advantages = rewards.map((r, i) => {
    const loo = k < 2 ? 0 : r - (total - r) / (k - 1);
    return (1 - alpha) * loo + alpha * ((exps[i] as number) / z - 1 / k);
  });
  return { rewards, advantages, mode: "rloo+max", tau };
}

/** The default minimum of valid proposals: SAH's 6 of 8, scaled to K and rounded up. */
export const defaultMinValid = (k: number): number => (k <= 0 ? 0 : Math.max(1, Math.ceil((6 * k) / 8)));

export type ProposalGateMode = { kind: "off" } | { kind: "all" } | { kind: "min"; min: number };

/** SAH's gate modes: "off", "all", or "min<N>" with 1 ≤ N ≤ K. */
export function parseProposalGate(mode: string, k: number): ProposalGateMode {
  if (mode === "off" || mode === "all") return { kind: mode };
  const m = /^min(\d+)$/.exec(mode);
  const n = m ? Number(m[1]) : Number.NaN;
  if (Number.isInteger(n) && n >= 1 && n <= k) return { kind: "min", min: n };
  throw new RangeError(`unknown proposal gate ${JSON.stringify(mode)}: expected off, all, or min<N> with 1 <= N <= ${k}`);
}

/** Whether a round may go on to rollouts: fewer valid proposals than the gate's minimum fails the round. */
export function proposalGate(
  validCount: number,
  k: number,
  mode: ProposalGateMode = { kind: "min", min: defaultMinValid(k) },
): { passed: boolean; minValid: number; message?: string } {
  const minValid = mode.kind === "off" ? 0 : mode.kind === "all" ? k : mode.min;
  if (validCount >= minValid) return { passed: true, minValid };
  return { passed: false, minValid, message: `only ${validCount}/${k} valid proposals (minimum ${minValid} required)` };
}
