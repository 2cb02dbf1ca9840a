import { describe, expect, it } from "vitest";
import {
  bestPerTask,
  evolutionRows,
  type Frontier,
  paretoList,
  passRates,
  updateFrontier,
} from "../../../src/method/rules/meta-harness.ts";

// Expected values produced by running Meta-Harness's own compute_pass_rates, update_frontier, update_evolution_summary
// (reference_examples/terminal_bench_2) and compute_pareto_frontier (text_classification), commit 95175f7, on the same
// inputs in a scratch script outside the repository.
describe("meta-harness: pass rates and the frontier", () => {
  it("per-task pass rates and the flat average over all trials (4 passes of 7 trials)", () => {
    expect(passRates({ t1: [1, 0], t2: [1, 1, 0.5], t3: [0, 0], t4: [] })).toEqual({
      perTask: { t1: 0.5, t2: 1, t3: 0, t4: 0 },
      avg: 0.5714285714285714,
    });
    expect(passRates({})).toEqual({ perTask: {}, avg: 0 });
  });
  it("best per task and the best average; ties keep the earlier holder", () => {
    const base = passRates({ t1: [0, 0], t2: [1, 0] });
    let f: Frontier = updateFrontier({ tasks: {} }, [["baseline", base]]);
    f = updateFrontier(f, [
      ["a", passRates({ t1: [1, 0], t2: [1, 0] })],
      ["b", passRates({ t1: [1, 1], t2: [0, 0] })],
    ]);
    expect(f).toEqual({
      tasks: { t1: { candidate: "b", score: 1 }, t2: { candidate: "baseline", score: 0.5 } },
      best: { candidate: "a", avg: 0.5 },
    });
  });
  it("minimise: lower is better; an empty frontier takes the first result", () => {
    const f = updateFrontier(
      { tasks: {} },
      [
        ["x", { perTask: { c5: 0.4 }, avg: 0.4 }],
        ["y", { perTask: { c5: 0.39 }, avg: 0.39 }],
        ["z", { perTask: { c5: 0.41 }, avg: 0.41 }],
      ],
      "minimize",
    );
    expect(f).toEqual({ tasks: { c5: { candidate: "y", score: 0.39 } }, best: { candidate: "y", avg: 0.39 } });
  });
});

describe("meta-harness: the Pareto list and the per-task best", () => {
  it("score descending then cost ascending, kept while cost ≤ the lowest so far (equal-cost ties stay)", () => {
    const points = [
      { candidate: "m1", score: 80, cost: 1000 },
      { candidate: "m2", score: 85, cost: 5000 },
      { candidate: "m3", score: 85, cost: 3000 },
      { candidate: "m4", score: 70, cost: 3000 },
      { candidate: "m5", score: 60, cost: 500 },
      { candidate: "m6", score: 60, cost: 500 },
    ];
    expect(paretoList(points).map((p) => p.candidate)).toEqual(["m3", "m1", "m5", "m6"]);
    expect(paretoList([])).toEqual([]);
  });
  it("per task from all results: best score, then lower cost, then the first", () => {
    const r = bestPerTask([
      { candidate: "a", task: "t", score: 0.8, cost: 100 },
      { candidate: "b", task: "t", score: 0.8, cost: 50 },
      { candidate: "c", task: "t", score: 0.8, cost: 50 },
      { candidate: "d", task: "u", score: 0.1 },
    ]);
    expect(r).toEqual({ t: { candidate: "b", score: 0.8, cost: 50 }, u: { candidate: "d", score: 0.1, cost: 0 } });
  });
});

describe("meta-harness: evolution_summary.jsonl rows", () => {
  it("one row per candidate with Meta-Harness's fields, rounding and outcome text; timing on the first row", () => {
    const a = passRates({ t1: [1, 0], t2: [1, 0] });
    const b = passRates({ t1: [1, 1], t2: [0, 0] });
    const rows = evolutionRows(
      3,
      [{ candidate: "a", hypothesis: "retry on timeout", changes: "tools" }, { candidate: "b" }, { candidate: "c" }],
      { a, b },
      0.5, // the frontier's best after the update, as upstream reads it
      { timing: { propose: 12.345, bench: 100.06 } },
    );
    expect(rows[0]).toEqual({
      iteration: 3,
      candidate: "a",
      avg_score: 0.5,
      per_task: { t1: 0.5, t2: 0.5 },
      hypothesis: "retry on timeout",
      axis: "?",
      changes: "tools",
      delta: 0,
      outcome: "50.0% (+0.0%)",
      timing_s: { propose: 12.3, bench: 100.1 },
    });
    expect(rows[1]).toMatchObject({ candidate: "b", per_task: { t1: 1, t2: 0 }, delta: 0, outcome: "50.0% (+0.0%)" });
    expect(rows[1]).not.toHaveProperty("timing_s");
    expect(rows[2]).toMatchObject({ candidate: "c", avg_score: null, delta: null, outcome: "failed" });
  });
  it("delta is null while the frontier's best is 0; non-fractional scores print as numbers", () => {
    const rows = evolutionRows(1, [{ candidate: "x" }], { x: { perTask: { cp: 2.6351 }, avg: 2.6351 } }, 2.5, { percent: false });
    expect(rows[0]).toMatchObject({ avg_score: 2.635, delta: 0.135, outcome: "2.6351 (+0.1351)" });
    expect(evolutionRows(1, [{ candidate: "x" }], { x: { perTask: {}, avg: 0.2 } }, 0)[0]?.delta).toBeNull();
  });
});
