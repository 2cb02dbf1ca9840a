import { describe, expect, it } from "vitest";
import { bestImprovement, GREEDY_PROPOSALS, keepIfBetter } from "../../../src/method/rules/greedy.ts";

describe("greedy: one proposal, kept only if strictly better", () => {
  it("maximise: better replaces; a tie or worse does not", () => {
    expect(GREEDY_PROPOSALS).toBe(1);
    expect(keepIfBetter(1.51, 1.5, "maximize")).toBe(true);
    expect(keepIfBetter(1.5, 1.5, "maximize")).toBe(false);
    expect(keepIfBetter(1.4, 1.5, "maximize")).toBe(false);
  });
  it("minimise: lower replaces", () => {
    expect(keepIfBetter(0.39, 0.4, "minimize")).toBe(true);
    expect(keepIfBetter(0.41, 0.4, "minimize")).toBe(false);
  });
  it("an unscored candidate is never kept; any scored one replaces an unscored incumbent", () => {
    expect(keepIfBetter(undefined, 0.4, "maximize")).toBe(false);
    expect(keepIfBetter(Number.NaN, 0.4, "maximize")).toBe(false);
    expect(keepIfBetter(null, null, "maximize")).toBe(false);
    expect(keepIfBetter(-3, undefined, "maximize")).toBe(true);
  });
  it("of several candidates, the best strictly better one (the first on a tie); none when nothing beats the incumbent", () => {
    expect(bestImprovement([1.6, 1.8, 1.8, undefined], 1.5, "maximize")).toBe(1);
    expect(bestImprovement([1.4, 1.5], 1.5, "maximize")).toBeUndefined();
    expect(bestImprovement([], 1.5, "maximize")).toBeUndefined();
    expect(bestImprovement([0.5, 0.3, 0.35], 0.4, "minimize")).toBe(1);
  });
});
