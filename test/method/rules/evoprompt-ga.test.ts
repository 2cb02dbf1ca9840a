import { describe, expect, it } from "vitest";
import {
  EVOPROMPT_DEFAULTS,
  gaParentPairs,
  gaSurvivors,
  type Member,
  wheelPool,
  wheelWeights,
} from "../../../src/method/rules/evoprompt-ga.ts";
import { oriented } from "../../../src/method/rules/sample.ts";
import { rng } from "../../../src/rng.ts";

const m = (text: string, score: number): Member => ({ text, score });
const seq =
  (...xs: number[]) =>
  () =>
    xs.shift() as number;

describe("evoprompt-ga: roulette wheel", () => {
  it("weights are the scores (EvoPrompt's fitness / Σ fitness)", () => {
    expect(wheelWeights([0.2, 0.8])).toEqual([0.2, 0.8]);
  });
  it("negative scores (a minimised metric, negated) are shifted by the minimum; all-zero fitness is uniform", () => {
    expect(wheelWeights([oriented(0.4, "minimize"), oriented(0.2, "minimize")])).toEqual([0, 0.2]);
    expect(wheelWeights([0, 0])).toEqual([1, 1]);
  });
  it("the pool draws popsize members with replacement by cumulative weight (1:3 → u < 0.25 is the first)", () => {
    const pop = [m("A", 1), m("B", 3)];
    expect(wheelPool(pop, seq(0.1, 0.5, 0.24)).map((x) => x.text)).toEqual(["A", "B"]);
    expect(wheelPool(pop, seq(0.1, 0.5, 0.24), 3).map((x) => x.text)).toEqual(["A", "B", "A"]);
  });
  it("a member with zero fitness never enters the pool; each child gets two distinct pool positions", () => {
    const pop = [m("A", 0), m("B", 0.5), m("C", 0.9), m("D", 0.3)];
    const pairs = gaParentPairs(pop, "wheel", rng(9));
    expect(pairs).toHaveLength(4);
    for (const [a, b] of pairs) {
      expect(a.text).not.toBe("A");
      expect(b.text).not.toBe("A");
    }
  });
});

describe("evoprompt-ga: random and tournament selection", () => {
  const pop = [m("A", 0.1), m("B", 0.5), m("C", 0.9), m("D", 0.3)];
  it("random: two distinct members", () => {
    for (const [a, b] of gaParentPairs(pop, "random", rng(4))) expect(a).not.toBe(b);
  });
  it("tour: the better of each sampled pair (by hand: groups {A, B} and {D, A} → parents B and D)", () => {
    // sampleDistinct draws position below(4) then 1 + below(3) after a swap: 0, 0 → A, B; 0.99, 0.99 → D, then A.
    expect(gaParentPairs(pop, "tour", seq(0, 0, 0.99, 0.99), 1).map(([a, b]) => [a.text, b.text])).toEqual([["B", "D"]]);
  });
  it("a tie in a tournament keeps the first drawn", () => {
    const tied = [m("A", 0.5), m("B", 0.5), m("C", 0.5)];
    expect(gaParentPairs(tied, "tour", seq(0, 0, 0, 0), 1)[0]?.[0].text).toBe("A");
  });
  it("fewer than two members is refused", () => {
    expect(() => gaParentPairs([m("A", 1)], "random", rng(1))).toThrow(/two members/);
  });
});

describe("evoprompt-ga: survival", () => {
  it("topk: the best popsize of parents ∪ children, one per text, a re-scored text keeps the newer score", () => {
    const parents = [m("A", 0.1), m("B", 0.5), m("C", 0.9)];
    const children = [m("B", 0.7), m("E", 0.6), m("F", 0.05)];
    expect(gaSurvivors(parents, children)).toEqual([m("C", 0.9), m("B", 0.7), m("E", 0.6)]);
  });
  it("topk keeps first-seen order among equal scores", () => {
    expect(gaSurvivors([m("A", 0.5), m("B", 0.5)], [m("C", 0.5)], "topk", 2).map((x) => x.text)).toEqual(["A", "B"]);
  });
  it("std: child j replaces member j", () => {
    expect(gaSurvivors([m("A", 0.9), m("B", 0.5)], [m("X", 0.1), m("Y", 0.2)], "std")).toEqual([m("X", 0.1), m("Y", 0.2)]);
  });
  it("EvoPrompt's defaults: population 10, 10 generations, wheel, topk", () => {
    expect(EVOPROMPT_DEFAULTS).toEqual({ popsize: 10, budget: 10, selection: "wheel", survival: "topk" });
  });
});
