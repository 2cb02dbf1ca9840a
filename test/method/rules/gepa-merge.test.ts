import { describe, expect, it } from "vitest";
import { paretoFront } from "../../../src/method/rules/gepa.ts";
import {
  acceptMerge,
  afterMerge,
  afterReflective,
  ancestors,
  eligibleAncestors,
  emptyMergeLog,
  hasDesirableComponent,
  mergeCandidates,
  mergeComponents,
  mergeDue,
  mergeSchedule,
  mergeSubsample,
  proposeMerge,
} from "../../../src/method/rules/gepa-merge.ts";
import { rng } from "../../../src/rng.ts";

// A lineage: 0 is the seed; 1, 2, 4, 5 are children of 0; 3 is a child of 1. Expected merge outcomes were produced by
// running GEPA's own proposer/merge.py (commit b265bf9) on the same programs, parents and aggregates (scratch script).
const PROGRAMS = [
  { sys: "A", skill: "S" },
  { sys: "B", skill: "S" },
  { sys: "A", skill: "T" },
  { sys: "C", skill: "S" },
  { sys: "A", skill: "S" },
  { sys: "D", skill: "U" },
];
const PARENTS = [[null], [0], [0], [1], [0], [0]];
const AGG = [0.5, 0.6, 0.7, 0.65, 0.55, 0.9];
const overlap = Object.fromEntries(["a", "b", "c", "d", "e"].map((k) => [k, 0.5]));
const SCORES = PROGRAMS.map(() => overlap);
const input = (candidates: number[], aggregates = AGG) => ({
  aggregates,
  candidates,
  programs: PROGRAMS,
  parents: PARENTS,
  scores: SCORES,
});

describe("gepa merge: which pairs may merge", () => {
  it("ancestors follow every parent link", () => {
    expect([...ancestors(3, PARENTS)].sort()).toEqual([0, 1]);
    expect(ancestors(0, PARENTS).size).toBe(0);
  });
  it("a desirable component: the ancestor equals one side and the sides differ (GEPA: true for 0/1/2, false for 4 with itself)", () => {
    expect(hasDesirableComponent(PROGRAMS, 0, 1, 2)).toBe(true);
    expect(hasDesirableComponent(PROGRAMS, 0, 4, 4)).toBe(false);
  });
  it("the ancestor must not score above either side and must not have been merged with the pair (GEPA's filter_ancestors)", () => {
    expect(eligibleAncestors(1, 2, [0], emptyMergeLog(), AGG, PROGRAMS)).toEqual([0]);
    const better = [0.8, ...AGG.slice(1)];
    expect(eligibleAncestors(1, 2, [0], emptyMergeLog(), better, PROGRAMS)).toEqual([]);
    expect(eligibleAncestors(1, 2, [0], { triplets: [[1, 2, 0]], descriptions: [] }, AGG, PROGRAMS)).toEqual([]);
  });
  it("a candidate and its own ancestor never merge (GEPA: 1 and 3 give None)", () => {
    expect(proposeMerge(input([1, 3]), emptyMergeLog(), rng(0))).toBeUndefined();
  });
  it("fewer than two candidates or fewer than three programs: no merge", () => {
    expect(proposeMerge(input([2]), emptyMergeLog(), rng(0))).toBeUndefined();
    expect(proposeMerge({ ...input([0, 1]), parents: PARENTS.slice(0, 2) }, emptyMergeLog(), rng(0))).toBeUndefined();
  });
  it("too little shared validation support (fewer than 5 common keys) refuses the pair", () => {
    const thin = { ...input([1, 2]), scores: PROGRAMS.map(() => ({ a: 1 })) };
    expect(proposeMerge(thin, emptyMergeLog(), rng(0))).toBeUndefined();
  });
  it("merge candidates are the non-dominated frontier", () => {
    const f = paretoFront([
      { a: 1, b: 0 },
      { a: 0, b: 1 },
      { a: 0.5, b: 0.5 },
    ]);
    expect(mergeCandidates(f, [0.5, 0.5, 0.5])).toEqual([0, 1]);
  });
});

describe("gepa merge: the merged candidate (GEPA's outputs)", () => {
  it("1 and 2 via 0: each side's change is taken where the other kept the ancestor's → {sys: B, skill: T}", () => {
    const log = emptyMergeLog();
    expect(proposeMerge(input([1, 2]), log, rng(0))).toEqual({ program: { sys: "B", skill: "T" }, i: 1, j: 2, ancestor: 0 });
    expect(log).toEqual({ triplets: [[1, 2, 0]], descriptions: [[1, 2, [1, 2]]] });
    // The same merge is never proposed twice.
    expect(proposeMerge(input([1, 2]), log, rng(1))).toBeUndefined();
  });
  it("2 and 5 via 0: where both changed, the higher aggregate (5: 0.9 > 0.7) wins → {sys: D, skill: U}", () => {
    const log = emptyMergeLog();
    expect(proposeMerge(input([2, 5]), log, rng(0))?.program).toEqual({ sys: "D", skill: "U" });
    expect(log.descriptions).toEqual([[2, 5, [5, 5]]]);
  });
  it("both changed with equal aggregates: a coin flip between the sides", () => {
    const equal = [0.5, 0.6, 0.7, 0.65, 0.55, 0.7];
    const heads = mergeComponents(0, 2, 5, PROGRAMS, equal, () => 0.1).program.skill;
    const tails = mergeComponents(0, 2, 5, PROGRAMS, equal, () => 0.9).program.skill;
    expect(new Set([heads, tails])).toEqual(new Set(["T", "U"]));
  });
});

describe("gepa merge: evaluation and schedule", () => {
  it("subsample: ⌈5/3⌉ = 2 keys where i wins, 2 where j wins, 1 tie, all distinct", () => {
    const a = { w1: 1, w2: 1, w3: 1, l1: 0, l2: 0, l3: 0, t1: 0.5, t2: 0.5 };
    const b = { w1: 0, w2: 0, w3: 0, l1: 1, l2: 1, l3: 1, t1: 0.5, t2: 0.5 };
    const keys = mergeSubsample(a, b, rng(4));
    expect(keys).toHaveLength(5);
    expect(new Set(keys).size).toBe(5);
    expect(keys.filter((k) => k.startsWith("w"))).toHaveLength(2);
    expect(keys.filter((k) => k.startsWith("l"))).toHaveLength(2);
    expect(keys.filter((k) => k.startsWith("t"))).toHaveLength(1);
  });
  it("subsample with fewer common keys than 5 repeats keys (random.choices)", () => {
    const keys = mergeSubsample({ x: 1, y: 0 }, { x: 0, y: 1, z: 3 }, rng(2));
    expect(keys).toHaveLength(5);
    expect(new Set(keys)).toEqual(new Set(["x", "y"]));
  });
  it("accepted when Σ new ≥ the better parent's Σ", () => {
    expect(acceptMerge([2, 3], [1, 1, 1])).toBe(true);
    expect(acceptMerge([2, 3.5], [1, 1, 1])).toBe(false);
  });
  it("schedule: an accepted child makes a merge due for the next iteration; at most 5 accepted merges", () => {
    let s = mergeSchedule(2);
    expect(mergeDue(s)).toBe(false);
    s = afterReflective(s, true);
    expect(mergeDue(s)).toBe(true);
    s = afterMerge(s, false); // rejected: nothing consumed, but no merge next iteration without a new child
    expect(s).toEqual({ due: 1, accepted: 0, foundNew: false, max: 2 });
    s = afterReflective(afterMerge(afterReflective(s, true), true), true);
    expect(s).toEqual({ due: 2, accepted: 1, foundNew: true, max: 2 });
    s = afterReflective(afterMerge(afterMerge(s, true), true), true);
    expect(s.accepted).toBe(3);
    expect(afterReflective({ ...s, due: 0 }, true).due).toBe(0);
  });
});
