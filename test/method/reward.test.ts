import { describe, expect, it } from "vitest";
import { advantages, gap, gapReward, REWARD_MIN } from "../../src/method/reward.ts";

describe("gap-normalised reward", () => {
  it("maximise with a reference: halfway to the reference earns 0.5", () => {
    expect(gapReward(1.5, 1.0, 2.0, "maximize")).toBeCloseTo(0.5, 12);
  });
  it("reaching or passing the reference earns 1 (clamped)", () => {
    expect(gapReward(2.0, 1.0, 2.0, "maximize")).toBe(1);
    expect(gapReward(3.0, 1.0, 2.0, "maximize")).toBe(1);
  });
  it("no change earns 0; getting worse is negative, clamped at -1", () => {
    expect(gapReward(1.0, 1.0, 2.0, "maximize")).toBe(0);
    expect(gapReward(0.75, 1.0, 2.0, "maximize")).toBeCloseTo(-0.25, 12);
    expect(gapReward(-5, 1.0, 2.0, "maximize")).toBe(-1);
  });
  it("minimise: lower is better (Erdős C5 0.40 → 0.39 with reference 0.38 earns 0.5)", () => {
    expect(gapReward(0.39, 0.4, 0.38, "minimize")).toBeCloseTo(0.5, 9);
    expect(gapReward(0.41, 0.4, 0.38, "minimize")).toBeCloseTo(-0.5, 9);
  });
  it("without a reference the gap is the incumbent's magnitude (relative improvement)", () => {
    expect(gap(20, undefined)).toBe(20);
    expect(gapReward(21, 20, undefined, "maximize")).toBeCloseTo(0.05, 12);
  });
  it("a reference equal to the incumbent falls back to the relative gap", () => {
    expect(gap(2, 2)).toBe(2);
  });
  it("an invalid rollout earns the minimum", () => {
    expect(gapReward(undefined, 1, 2, "maximize")).toBe(REWARD_MIN);
    expect(gapReward(Number.NaN, 1, 2, "maximize")).toBe(REWARD_MIN);
  });
});

describe("advantages (0.7 leave-one-out + 0.3 sharpened toward the best)", () => {
  it("pins a hand-computed group", () => {
    // r = [1, 0, -1]: LOO = [1.5, 0, -1.5]; softmax(r/0.1) ≈ [1, 4.54e-5, 2.06e-9] → K·w - 1 ≈ [2, -0.99986, -1].
    const a = advantages([1, 0, -1]);
    const e: [number, number, number] = [Math.exp(0), Math.exp(-10), Math.exp(-20)];
    const z = e[0] + e[1] + e[2];
    const expected = [
      0.7 * 1.5 + 0.3 * ((3 * e[0]) / z - 1),
      0.7 * 0 + 0.3 * ((3 * e[1]) / z - 1),
      0.7 * -1.5 + 0.3 * ((3 * e[2]) / z - 1),
    ];
    for (const [i, x] of a.entries()) expect(x).toBeCloseTo(expected[i] as number, 12);
    expect(a[0]).toBeCloseTo(1.65, 3);
  });
  it("sums to zero and is zero for equal rewards", () => {
    const a = advantages([0.3, -0.2, 0.9, -1]);
    expect(a.reduce((x, y) => x + y, 0)).toBeCloseTo(0, 12);
    expect(advantages([0.5, 0.5, 0.5]).every((x) => Math.abs(x) < 1e-12)).toBe(true);
  });
  it("a group of one has advantage 0", () => {
    expect(advantages([0.8])).toEqual([0]);
  });
  it("ranks by reward", () => {
    const a = advantages([0.1, 0.4, -0.3, 0.2]);
    expect([...a].sort((x, y) => y - x)).toEqual([a[1], a[3], a[0], a[2]]);
  });
});
