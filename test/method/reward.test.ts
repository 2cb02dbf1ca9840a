import { describe, expect, it } from "vitest";
import {
  defaultMinValid,
  type GroupSlot,
  groupAdvantages,
  parseProposalGate,
  proposalGate,
  REWARD_MIN,
  softCapReward,
} from "../../src/method/reward.ts";

// HarnessTTT's released rules. Every expected number below was produced by running SAH's own rewards.py
// (gray311/Self_Adapt_Harness at bebde8e, task_reward_v2 and compute_task_group_v2 over rollout folders holding the
// same scores) in a scratch script outside the repository.
describe("HarnessTTT reward: soft cap above, −1 below", () => {
  it("with a reference (b = 1, ref = 2): 3·tanh(r/3) for gains, max(−1, r) for losses", () => {
    const sah = [0.0, 0.4954212387738881, 0.964538212594903, 2.2847824678672946, 2.9851642610601914, -1.0, -1.0];
    [1.0, 1.5, 2.0, 4.0, 10.0, 0.0, -5.0].forEach((score, i) => {
      expect(softCapReward(score, 1.0, 2.0, "maximize")).toBeCloseTo(sah[i] as number, 12);
    });
  });
  it("winners stay ranked: two candidates past the reference keep their order (the hard clip tied them)", () => {
    expect(softCapReward(4, 1, 2, "maximize")).toBeGreaterThan(softCapReward(3, 1, 2, "maximize"));
    expect(softCapReward(3, 1, 2, "maximize")).toBeGreaterThan(softCapReward(2, 1, 2, "maximize"));
  });
  it("without a reference: relative to |b|, clipped to [−1, 5] (b = 20)", () => {
    const sah = [0.0499999999975, 5.0, -0.99999999995, -1.0];
    [21.0, 200.0, 0.0, -10.0].forEach((score, i) => {
      expect(softCapReward(score, 20.0, undefined, "maximize")).toBeCloseTo(sah[i] as number, 12);
    });
  });
  it("a reference the incumbent has passed falls back to the relative rule (b = 20, ref = 10)", () => {
    expect(softCapReward(21, 20, 10, "maximize")).toBeCloseTo(0.0499999999975, 12);
  });
  it("minimise: lower is better (Erdős C5 0.40 → 0.39 with reference 0.38 is half the gap: 3·tanh(1/6))", () => {
    expect(softCapReward(0.39, 0.4, 0.38, "minimize")).toBeCloseTo(3 * Math.tanh(0.5 / 3), 9);
    expect(softCapReward(0.41, 0.4, 0.38, "minimize")).toBeCloseTo(-0.5, 9);
    expect(softCapReward(0.39, 0.4, undefined, "minimize")).toBeCloseTo(0.01 / (0.4 + 1e-9), 12);
    expect(softCapReward(0.39, 0.4, 0.45, "minimize")).toBeCloseTo(0.01 / (0.4 + 1e-9), 12); // ref worse than b
  });
  it("an invalid or failed rollout earns −1; no incumbent score earns +1", () => {
    expect(softCapReward(undefined, 1, 2, "maximize")).toBe(REWARD_MIN);
    expect(softCapReward(Number.NaN, 1, 2, "maximize")).toBe(REWARD_MIN);
    expect(softCapReward(1.2, undefined, 2, "maximize")).toBe(1);
  });
});

const slots = (rewards: number[], valid?: boolean[], repaired?: boolean[]): GroupSlot[] =>
  rewards.map((reward, i) => ({ reward, valid: valid?.[i] ?? true, repaired: repaired?.[i] ?? false }));
const close = (actual: number[], expected: number[]) => {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((x, i) => {
    expect(x).toBeCloseTo(expected[i] as number, 12);
  });
};
const rewardsOf = (scores: number[], b: number, ref: number | undefined) =>
  scores.map((x) => softCapReward(x, b, ref, "maximize"));

describe("HarnessTTT advantages: 0.7·leave-one-out + 0.3·(softmax(r/τ) − 1/K), τ = max(range/4, 1e-6)", () => {
  it("four valid slots with a reference (SAH's numbers)", () => {
    const g = groupAdvantages(slots(rewardsOf([2.5, 3.0, 1.5, 0.5], 1, 2)));
    close(g.rewards, [1.3863514717800292, 1.7483488360437307, 0.4954212387738881, -0.5]);
    close(g.advantages, [0.5839879603623616, 1.0081253977596696, -0.3234128544180582, -1.2687005037039731]);
    expect(g.mode).toBe("rloo+max");
    expect(g.tau).toBeCloseTo((1.7483488360437307 + 0.5) / 4, 12);
  });
  it("without a reference (b = 20, one reward clipped at 5)", () => {
    const g = groupAdvantages(slots(rewardsOf([21, 30, 200, 19], 20, undefined)));
    close(g.rewards, [0.0499999999975, 0.499999999975, 5.0, -0.0499999999975]);
    close(g.advantages, [-1.3060896767904258, -0.8837014446033842, 3.589638831464563, -1.399847710070753]);
  });
  it("zero signal: all valid and the range under 1e-3 → no update", () => {
    const g = groupAdvantages(slots(rewardsOf([1, 1, 1], 0.5, 2)));
    expect(g.mode).toBe("no_signal");
    expect(g.advantages).toEqual([0, 0, 0]);
  });
  it("ties with an invalid slot: the valid rewards collapse to their mean; only valid vs invalid is learned", () => {
    const g = groupAdvantages(slots([...rewardsOf([1.0, 1.0, 1.0000001], 0.5, 2), REWARD_MIN], [true, true, true, false]));
    close(g.rewards, [0.33196835352433, 0.33196835352433, 0.33196835352433, -1.0]);
    close(g.advantages, [0.33579261582234365, 0.33579261582234365, 0.33579261582234365, -1.007377847467031]);
  });
  it("a repaired slot is charged −1 whatever it scored, and counts as valid for the range", () => {
    const g = groupAdvantages(slots(rewardsOf([1.5, 1.25, 1.9], 1, 2), undefined, [false, true, false]));
    close(g.rewards, [0.4954212387738881, -1.0, 0.8739378373547727]);
    close(g.advantages, [0.3822571082870574, -1.2755226827836148, 0.8932655744965575]);
  });
  it("all invalid: every advantage 0; one slot: 0; no slots: nothing", () => {
    const all = groupAdvantages(slots([-1, -1, -1], [false, false, false]));
    close(all.advantages, [0, 0, 0]);
    expect(all.mode).toBe("rloo+max"); // as SAH labels it: not every slot is valid
    expect(groupAdvantages(slots(rewardsOf([1.5], 1, 2))).advantages).toEqual([0]);
    expect(groupAdvantages([])).toMatchObject({ rewards: [], advantages: [], mode: "no_signal" });
  });
  it("advantages sum to zero", () => {
    const g = groupAdvantages(slots([0.3, -0.2, 0.9, -1], [true, true, true, false]));
    expect(g.advantages.reduce((a, b) => a + b, 0)).toBeCloseTo(0, 12);
  });
});

describe("HarnessTTT proposal gate", () => {
  it("default minimum: 6 of 8 scaled to K, rounded up", () => {
    expect([1, 2, 3, 4, 8, 16].map(defaultMinValid)).toEqual([1, 2, 3, 3, 6, 12]);
    expect(defaultMinValid(0)).toBe(0);
  });
  it("fewer valid proposals than the minimum fails the round, with a message", () => {
    expect(proposalGate(6, 8)).toEqual({ passed: true, minValid: 6 });
    expect(proposalGate(5, 8)).toEqual({ passed: false, minValid: 6, message: "only 5/8 valid proposals (minimum 6 required)" });
    expect(proposalGate(2, 4).passed).toBe(false);
  });
  it("SAH's modes: off, all, min<N>; anything else is refused", () => {
    expect(proposalGate(0, 8, parseProposalGate("off", 8)).passed).toBe(true);
    expect(proposalGate(7, 8, parseProposalGate("all", 8)).passed).toBe(false);
    expect(parseProposalGate("min6", 8)).toEqual({ kind: "min", min: 6 });
    expect(() => parseProposalGate("min9", 8)).toThrow(/min<N>/);
    expect(() => parseProposalGate("most", 8)).toThrow(/unknown proposal gate/);
  });
});
