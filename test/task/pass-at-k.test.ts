import { describe, expect, it } from "vitest";
import { meanOver, passAtK, passHatK } from "../../src/task/qa/code/pass-at-k.ts";

/** C(n, k) exactly, in BigInt. */
function binom(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 0; i < k; i++) r = (r * BigInt(n - i)) / BigInt(i + 1);
  return r;
}
const ratio = (a: bigint, b: bigint) => Number((a * 10n ** 30n) / b) / 1e30;

describe("pass@k (the unbiased estimator)", () => {
  it("equals 1 − C(n−c, k)/C(n, k) for every n ≤ 30, c ≤ n, k ≤ n", () => {
    for (let n = 1; n <= 30; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++) {
          const exact = 1 - ratio(binom(n - c, k), binom(n, k));
          expect(Math.abs(passAtK(n, c, k) - exact), `n=${n} c=${c} k=${k}`).toBeLessThan(1e-12);
        }
  });
  it("is c/n at k = 1, 0 with no success, 1 when every draw of k must hold a success", () => {
    expect(passAtK(200, 37, 1)).toBeCloseTo(37 / 200, 14);
    expect(passAtK(10, 0, 5)).toBe(0);
    expect(passAtK(10, 6, 5)).toBe(1);
    expect(passAtK(200, 1, 100)).toBeCloseTo(0.5, 14);
  });
  it("refuses what is not a count", () => {
    expect(() => passAtK(5, 6, 1)).toThrow(RangeError);
    expect(() => passAtK(5, 1, 0)).toThrow(RangeError);
    expect(() => passAtK(5, 1.5, 1)).toThrow(RangeError);
  });
});

describe("pass^k (τ-bench)", () => {
  it("equals C(c, k)/C(n, k)", () => {
    for (let n = 1; n <= 20; n++)
      for (let c = 0; c <= n; c++)
        for (let k = 1; k <= n; k++)
          expect(Math.abs(passHatK(n, c, k) - ratio(binom(c, k), binom(n, k))), `n=${n} c=${c} k=${k}`).toBeLessThan(1e-12);
  });
  it("averages over tasks as run.py does", () => {
    const tasks = [
      { n: 4, c: 4 },
      { n: 4, c: 2 },
      { n: 4, c: 0 },
    ];
    expect(meanOver(tasks, 1, passHatK)).toBeCloseTo((1 + 0.5 + 0) / 3, 14);
    expect(meanOver(tasks, 2, passHatK)).toBeCloseTo((1 + 1 / 6 + 0) / 3, 14);
    expect(meanOver([], 1, passAtK)).toBe(0);
  });
});

describe("hone eval --samples", () => {
  it("runs each task n times at its own seeds and reports pass@k and pass^k from them", async () => {
    const { evaluateBenchmark } = await import("../../src/loop/eval.ts");
    const { join } = await import("node:path");
    const { ROOT } = await import("../helpers/fixtures.ts");
    const s = await evaluateBenchmark({
      harnessDir: join(ROOT, "harnesses", "qa"),
      benchmark: "bfcl-simple",
      split: "test",
      limit: 4,
      dataDir: join(ROOT, "test", "fixtures", "datasets"),
      model: "offline",
      samples: 3,
    });
    expect(s.tasks).toBe(4);
    expect(s.results).toHaveLength(12);
    expect(s.completed + s.failed).toBe(12);
    expect(Object.keys(s.passAtK)).toEqual(["pass@1"]);
    expect(Object.keys(s.passHatK)).toEqual(["pass^1", "pass^2", "pass^3"]);
    expect(s.passAtK["pass@1"]).toBeCloseTo(s.accuracy, 12);
  });
});
