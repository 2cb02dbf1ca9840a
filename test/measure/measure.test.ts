import { describe, expect, it } from "vitest";
import { clearsNoise, pairedInterval, strictlyBetter } from "../../src/measure/compare.ts";
import { estimateNoise, needsAnotherRepeat } from "../../src/measure/noise.ts";
import { mean, sampleSd, tCritical, tCritical95 } from "../../src/measure/stats.ts";
import { rng } from "../../src/rng.ts";

describe("statistics", () => {
  it("t critical values match scipy.stats.t.ppf(0.975, df)", () => {
    const scipy: [number, number][] = [
      [1, 12.706],
      [2, 4.303],
      [4, 2.776],
      [10, 2.228],
      [30, 2.042],
      [40, 2.021],
      [60, 2.0],
      [120, 1.98],
    ];
    for (const [df, t] of scipy) expect(tCritical95(df)).toBe(t);
    expect(tCritical95(3.72)).toBe(3.182); // rounded down: a wider interval, never a narrower one
    expect(tCritical95(4.000000000000001)).toBe(2.776);
    expect(tCritical95(Number.POSITIVE_INFINITY)).toBe(1.96);
  });

  it("t critical values at other levels (a Bonferroni correction) match scipy.stats.t.ppf(1 - alpha/2, df)", () => {
    const scipy: [number, number, number][] = [
      [1, 0.025, 25.451699579357168],
      [2, 0.00625, 12.589740561191753],
      [4, 0.00625, 5.261057575065803],
      [4, 0.0125, 4.314656048886743],
      [7, 0.01, 3.4994832973504924],
      [30, 0.001, 3.6459586350420627],
      [1000, 0.025, 2.2447831150193935],
    ];
    for (const [df, alpha, t] of scipy) expect(Math.abs(tCritical(df, alpha) - t) / t).toBeLessThan(1e-7);
    expect(tCritical(4.7, 0.00625)).toBe(tCritical(4, 0.00625)); // df rounded down, as tCritical95 does
    expect(tCritical(4, 0.05)).toBe(tCritical95(4));
  });

  it("the mean of equal values is that value exactly; sd of one value is 0", () => {
    expect(mean([0.1, 0.1, 0.1])).toBe(0.1);
    expect((0.1 + 0.1 + 0.1) / 3).not.toBe(0.1);
    expect(sampleSd([3])).toBe(0);
    expect(sampleSd([1, 2, 3])).toBeCloseTo(1, 12);
  });
});

describe("the repeat rule", () => {
  it("a task declared deterministic is evaluated once; one declared stochastic every time", () => {
    expect(needsAnotherRepeat([0.5], { repeats: 3, declared: false })).toBe(false);
    expect(needsAnotherRepeat([0.5, 0.5], { repeats: 3, declared: true })).toBe(true);
    expect(needsAnotherRepeat([0.5, 0.5, 0.5], { repeats: 3, declared: true })).toBe(false);
  });

  it("unknown: stops when two evaluations agree bit for bit, else repeats to N", () => {
    expect(needsAnotherRepeat([], { repeats: 3 })).toBe(true);
    expect(needsAnotherRepeat([0.5], { repeats: 3 })).toBe(true);
    expect(needsAnotherRepeat([0.5, 0.5], { repeats: 3 })).toBe(false);
    expect(needsAnotherRepeat([0.5, 0.5 + 2 ** -53], { repeats: 3 })).toBe(true);
    expect(needsAnotherRepeat([null, null], { repeats: 3 })).toBe(false);
    expect(needsAnotherRepeat([null, 0.5], { repeats: 3 })).toBe(true);
    expect(needsAnotherRepeat([0.5], { repeats: 1 })).toBe(false);
  });

  it("estimates: zero spread and deterministic for agreeing repeats, stochastic with sd for differing ones", () => {
    expect(estimateNoise([0.5, 0.5], { repeats: 3 })).toEqual({
      stochastic: false,
      basis: "measured",
      n: 2,
      invalid: 0,
      mean: 0.5,
      sd: 0,
      spread: 0,
    });
    const noisy = estimateNoise([0.7, 0.74, 0.69], { repeats: 3 });
    expect(noisy.stochastic).toBe(true);
    expect(noisy.spread).toBeCloseTo(0.05, 12);
    expect(noisy.sd).toBeCloseTo(0.026458, 5);
    expect(estimateNoise([0.5], { repeats: 1 }).basis).toBe("not_measured");
    expect(estimateNoise([0.5], { repeats: 1, declared: true })).toMatchObject({ stochastic: true, basis: "declared" });
  });
});

describe("comparisons", () => {
  it("strictly_better: a tie never promotes; direction is respected", () => {
    expect(strictlyBetter(1, 1, "maximize").better).toBe(false);
    expect(strictlyBetter(1.1, 1, "maximize").better).toBe(true);
    expect(strictlyBetter(0.9, 1, "minimize").better).toBe(true);
    expect(strictlyBetter(0.9, undefined, "maximize").better).toBe(true);
  });

  it("welch_interval agrees with scipy.stats.ttest_ind(equal_var=False).confidence_interval()", () => {
    // Reference intervals computed with scipy 1.x for these inputs (integer df, so no rounding of df).
    const table: [number[], number[], [number, number]][] = [
      [
        [1.0, 1.1, 1.2],
        [0.0, 0.1, 0.2],
        [0.7733042064472482, 1.2266957935527516],
      ],
      [
        [2.0, 2.5, 3.0, 3.5],
        [1.0, 1.5, 2.0, 2.5],
        [-0.11685734758235666, 2.1168573475823567],
      ],
    ];
    for (const [a, b, [lo, hi]] of table) {
      const c = clearsNoise(a, b, { direction: "maximize" });
      expect(c.interval[0]).toBeCloseTo(lo, 2);
      expect(c.interval[1]).toBeCloseTo(hi, 2);
      expect(c.better).toBe(lo > 0);
    }
  });

  it("welch_interval: equal means never clear the noise; minimisation flips the sign; the seed's noise is a floor", () => {
    expect(clearsNoise([0.7, 0.74, 0.69], [0.71, 0.69, 0.73], { direction: "maximize" }).better).toBe(false);
    const lower = clearsNoise([0.0, 0.1, 0.2], [1.0, 1.1, 1.2], { direction: "minimize" });
    expect(lower.better).toBe(true);
    expect(lower.difference).toBeCloseTo(1, 12);
    // Three identical repeats would give a zero margin; the floor keeps the measured noise in the margin.
    expect(clearsNoise([1.01, 1.01, 1.01], [1, 1, 1], { direction: "maximize" }).better).toBe(true);
    expect(clearsNoise([1.01, 1.01, 1.01], [1, 1, 1], { direction: "maximize", floorSd: 0.02 }).better).toBe(false);
  });

  it("welch_interval over a round's comparisons: the best of K noise draws clears at about the rate of one comparison", () => {
    // K candidates as good as the incumbent, all compared with the incumbent's same repeats, the best one promoted:
    // without the correction a round promoted noise K times as often as one 95% comparison does.
    const random = rng(5);
    const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const draw = () => [gauss(), gauss(), gauss()];
    const K = 8;
    let rounds = 0;
    const n = 2000;
    for (let i = 0; i < n; i++) {
      const inc = draw();
      const floorSd = sampleSd(draw());
      if (
        Array.from({ length: K }, draw).some(
          (c) => clearsNoise(c, inc, { direction: "maximize", floorSd, comparisons: K }).better,
        )
      )
        rounds++;
    }
    expect(rounds / n).toBeLessThan(0.01); // 0.05% with the correction; without it 2.75% of these rounds promoted noise
    const lucky = clearsNoise([0.73, 0.74, 0.72], [0.7, 0.71, 0.69], { direction: "maximize", comparisons: 8 });
    expect(lucky.interval[0]).toBeGreaterThan(0);
    expect(lucky.better).toBe(false);
    expect(lucky.family?.margin).toBeCloseTo(5.261057575065803 * Math.sqrt((2 * 0.0001) / 3), 9);
    expect(clearsNoise([0.73, 0.74, 0.72], [0.7, 0.71, 0.69], { direction: "maximize", comparisons: 1 }).family).toBeUndefined();
  });

  it("a paired bootstrap interval excludes zero for a consistent gain and includes it for none", () => {
    const [lo] = pairedInterval([0.1, 0.2, 0.15, 0.12, 0.18], { seed: 1 });
    expect(lo).toBeGreaterThan(0);
    const [a, b] = pairedInterval([0.1, -0.1, 0.05, -0.05], { seed: 1 });
    expect(a).toBeLessThan(0);
    expect(b).toBeGreaterThan(0);
  });
});
