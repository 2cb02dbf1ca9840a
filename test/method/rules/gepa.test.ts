import { describe, expect, it } from "vitest";
import {
  acceptMinibatch,
  aggregate,
  allPerfect,
  childComponentPointer,
  currentBestParent,
  epochOrder,
  epsilonGreedyParent,
  minibatchAt,
  paretoFront,
  paretoParentWeights,
  removeDominated,
  roundRobinComponent,
  selectParetoParent,
  topKParetoParent,
  updateFront,
} from "../../../src/method/rules/gepa.ts";
import { oriented } from "../../../src/method/rules/sample.ts";
import { rng } from "../../../src/rng.ts";

const sorted = (m: Map<string, Set<number>>) => Object.fromEntries([...m].map(([k, v]) => [k, [...v].sort()]));
const fronts = (f: ReturnType<typeof paretoFront>) => new Map([...f].map(([k, v]) => [k, v.members]));

// Four candidates on five keys. Expected fronts, reduced fronts and weights were produced by running GEPA's own
// gepa_utils.remove_dominated_programs (commit b265bf9) on these inputs in a scratch script outside the repository.
const MIXED = [
  { k1: 0.5, k2: 0.2, k3: 0.9, k4: 0.1, k5: 0.0 },
  { k1: 0.5, k2: 0.8, k3: 0.1, k4: 0.1, k5: 0.0 },
  { k1: 0.1, k2: 0.3, k3: 0.9, k4: 0.2, k5: 0.0 },
  { k1: 0.0, k2: 0.0, k3: 0.0, k4: 0.7, k5: 0.0 },
];
const agg = (cs: Record<string, number>[]) => cs.map(aggregate);

describe("gepa: per-key Pareto frontier", () => {
  it("keeps the best score per key; ties join, a strictly better score replaces", () => {
    const f = paretoFront(MIXED);
    expect(sorted(fronts(f))).toEqual({ k1: [0, 1], k2: [1], k3: [0, 2], k4: [3], k5: [0, 1, 2, 3] });
    expect(f.get("k3")?.best).toBe(0.9);
    updateFront(f, 4, { k3: 0.95, k5: 0.0 });
    expect([...(f.get("k3")?.members ?? [])]).toEqual([4]);
    expect([...(f.get("k5")?.members ?? [])]).toEqual([0, 1, 2, 3, 4]);
  });
  it("a candidate not evaluated on a key (or scored NaN there) does not hold it", () => {
    const f = paretoFront([{ a: 0.2 }, { b: 0.1, a: Number.NaN }]);
    expect(sorted(fronts(f))).toEqual({ a: [0], b: [1] });
  });
  it("aggregate is the mean over evaluated keys", () => {
    expect(aggregate({ a: 1, b: 0 })).toBe(0.5);
    expect(aggregate({})).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe("gepa: dominated candidates are removed before parent weights (GEPA's own outputs)", () => {
  it("mixed: 2's wins (k3, k5) are shared with others, so it goes; weights 0:3, 1:3, 3:2", () => {
    const f = paretoFront(MIXED);
    expect(sorted(removeDominated(f, agg(MIXED)))).toEqual({ k1: [0, 1], k2: [1], k3: [0], k4: [3], k5: [0, 1, 3] });
    expect(Object.fromEntries(paretoParentWeights(f, agg(MIXED)))).toEqual({ 0: 3, 1: 3, 3: 2 });
  });
  it("all tied everywhere: removal from the lowest aggregate up (stable) leaves only the last one", () => {
    const cs = [
      { a: 1, b: 1 },
      { a: 1, b: 1 },
      { a: 1, b: 1 },
    ];
    expect(Object.fromEntries(paretoParentWeights(paretoFront(cs), agg(cs)))).toEqual({ 2: 2 });
  });
  it("one candidate is its own frontier", () => {
    expect(Object.fromEntries(paretoParentWeights(paretoFront([{ a: 0.3 }]), [0.3]))).toEqual({ 0: 1 });
  });
  it("shadowed: 2 only ties on c with the better 0, so it is removed; weights 0:2, 1:2", () => {
    const cs = [
      { a: 1, b: 0, c: 0.5 },
      { a: 1, b: 1, c: 0 },
      { a: 0, b: 0, c: 0.5 },
    ];
    expect(Object.fromEntries(paretoParentWeights(paretoFront(cs), agg(cs)))).toEqual({ 0: 2, 1: 2 });
  });
});

describe("gepa: parent ∝ keys won", () => {
  it("draws with probability weight/Σ: with weights 0:3, 1:3, 3:2 (Σ 8) a draw u maps to 0 below 3/8, 1 below 6/8", () => {
    const f = paretoFront(MIXED);
    const at = (u: number) => selectParetoParent(f, agg(MIXED), () => u);
    expect(at(0)).toBe(0);
    expect(at(0.374)).toBe(0);
    expect(at(0.376)).toBe(1);
    expect(at(0.749)).toBe(1);
    expect(at(0.751)).toBe(3);
    expect(at(0.999)).toBe(3);
  });
  it("empirical frequencies over 8,000 seeded draws match 3/8, 3/8, 2/8", () => {
    const f = paretoFront(MIXED);
    const r = rng(7);
    const counts = new Map<number, number>();
    for (let i = 0; i < 8000; i++) {
      const p = selectParetoParent(f, agg(MIXED), r) as number;
      counts.set(p, (counts.get(p) ?? 0) + 1);
    }
    expect((counts.get(0) ?? 0) / 8000).toBeCloseTo(0.375, 1);
    expect((counts.get(3) ?? 0) / 8000).toBeCloseTo(0.25, 1);
    expect(counts.has(2)).toBe(false);
  });
  it("an empty archive has no parent", () => {
    expect(selectParetoParent(new Map(), [], rng(1))).toBeUndefined();
    expect(currentBestParent([])).toBeUndefined();
  });
  it("minimise: negate the metric first, so the lowest value holds the key", () => {
    const cs = [{ a: oriented(0.4, "minimize") }, { a: oriented(0.39, "minimize") }];
    expect(Object.fromEntries(paretoParentWeights(paretoFront(cs), agg(cs)))).toEqual({ 1: 1 });
  });
  it("current_best picks the first maximum; epsilon_greedy explores with probability ε", () => {
    expect(currentBestParent([0.2, 0.7, 0.7])).toBe(1);
    const seq = [0.05, 0.9];
    expect(epsilonGreedyParent([0.2, 0.7, 0.1], 0.1, () => seq.shift() as number)).toBe(2);
    expect(epsilonGreedyParent([0.2, 0.7, 0.1], 0.1, () => 0.5)).toBe(1);
  });
  it("top_k_pareto restricts to the k best by aggregate (agg 0.34, 0.3, 0.3, 0.14 → top 2 are 0 and 1)", () => {
    const f = paretoFront(MIXED);
    const picks = new Set(Array.from({ length: 200 }, (_, i) => topKParetoParent(f, agg(MIXED), 2, rng(i))));
    expect([...picks].sort()).toEqual([0, 1]);
  });
});

describe("gepa: acceptance, reflection target, minibatches", () => {
  it("minibatch acceptance is a strict improvement of the sum (ties rejected) unless improvement_or_equal", () => {
    expect(acceptMinibatch([0.5, 0.5, 0], [0.5, 0.5, 0.1])).toBe(true);
    expect(acceptMinibatch([0.5, 0.5, 0], [1, 0, 0])).toBe(false);
    expect(acceptMinibatch([0.5, 0.5, 0], [1, 0, 0], "improvement_or_equal")).toBe(true);
    expect(acceptMinibatch([], [])).toBe(false);
  });
  it("a parent with a perfect minibatch is skipped (perfect_score = 1)", () => {
    expect(allPerfect([1, 1, 1])).toBe(true);
    expect(allPerfect([1, 0.99, 1])).toBe(false);
    expect(allPerfect([1, null])).toBe(false);
  });
  it("round robin over components; a child starts where its furthest parent was", () => {
    expect(roundRobinComponent(0, ["system_prompt", "skill_body"])).toEqual({ name: "system_prompt", next: 1 });
    expect(roundRobinComponent(1, ["system_prompt", "skill_body"])).toEqual({ name: "skill_body", next: 0 });
    expect(childComponentPointer([0, 1])).toBe(1);
    expect(childComponentPointer([])).toBe(0);
  });
  it("epoch order: every id once, padded to a multiple of the minibatch size with the latest least-frequent ids", () => {
    const order = epochOrder(["a", "b", "c", "d", "e"], 3, rng(3));
    expect(order).toHaveLength(6);
    expect([...new Set(order)].sort()).toEqual(["a", "b", "c", "d", "e"]);
    expect(order[5]).toBe(order[4]); // the one pad repeats the last shuffled id, as Counter.most_common()[::-1][0]
    const long = epochOrder(["p", "q", "r", "s", "t"], 9, rng(2)); // GEPA pads t, s, r, q after p q r s t
    expect(long.slice(5)).toEqual([long[4], long[3], long[2], long[1]]);
    const two = epochOrder(["x"], 3, rng(1));
    expect(two).toEqual(["x", "x", "x"]);
    expect(minibatchAt(order, 0, 3)).toEqual({ epoch: 0, ids: order.slice(0, 3) });
    expect(minibatchAt(order, 2, 3)).toEqual({ epoch: 1, ids: order.slice(0, 3) });
    expect(() => epochOrder([], 3, rng(1))).toThrow(/empty/);
  });
  it("the same seed gives the same parent and order", () => {
    const f = paretoFront(MIXED);
    expect(selectParetoParent(f, agg(MIXED), rng(11))).toBe(selectParetoParent(f, agg(MIXED), rng(11)));
    expect(epochOrder([1, 2, 3, 4], 2, rng(5))).toEqual(epochOrder([1, 2, 3, 4], 2, rng(5)));
  });
});
