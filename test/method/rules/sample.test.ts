import { describe, expect, it } from "vitest";
import {
  below,
  choice,
  mean,
  oriented,
  sampleDistinct,
  shuffled,
  strictlyBetter,
  weightedIndex,
} from "../../../src/method/rules/sample.ts";
import { rng } from "../../../src/rng.ts";

describe("seeded sampling helpers", () => {
  it("below(n) is in [0, n) even for a draw of 0.9999999999", () => {
    expect(below(3, () => 0.9999999999)).toBe(2);
    expect(below(3, () => 0)).toBe(0);
    expect(() => below(0, () => 0)).toThrow(/positive integer/);
  });
  it("weightedIndex maps a draw to the cumulative weights (1, 0, 3: u < 0.25 → 0, else 2)", () => {
    expect(weightedIndex([1, 0, 3], () => 0.24)).toBe(0);
    expect(weightedIndex([1, 0, 3], () => 0.25)).toBe(2);
    expect(weightedIndex([1, 0, 3], () => 0.999999999999)).toBe(2);
    expect(() => weightedIndex([0, 0], () => 0.5)).toThrow(/sum to zero/);
    expect(() => weightedIndex([1, -1], () => 0.5)).toThrow(/non-negative/);
  });
  it("sampleDistinct draws distinct positions; shuffled is a permutation; choice refuses nothing", () => {
    const r = rng(5);
    const s = sampleDistinct([1, 2, 3, 4, 5], 3, r);
    expect(new Set(s).size).toBe(3);
    expect(shuffled([1, 2, 3, 4], r).sort()).toEqual([1, 2, 3, 4]);
    expect(() => sampleDistinct([1], 2, r)).toThrow(/distinct/);
    expect(() => choice([], r)).toThrow(/no items/);
  });
  it("direction helpers", () => {
    expect(oriented(2, "maximize")).toBe(2);
    expect(oriented(2, "minimize")).toBe(-2);
    expect(strictlyBetter(1, 2, "minimize")).toBe(true);
    expect(mean([])).toBeNaN();
  });
});
