import { describe, expect, it } from "vitest";
import { bestSoFar, curveBand } from "../../src/compare/curve.ts";
import { differenceInterval, tInterval } from "../../src/compare/intervals.ts";
import { comparePaired, pairedDifferences } from "../../src/compare/paired.ts";
import { buildReport, summarizeCell } from "../../src/compare/report.ts";
import { pairedInterval } from "../../src/measure/compare.ts";
import { cellRecord, identity, points } from "./records.ts";

// Every expected value below was worked out by hand from the formulas, with Student t's exact 97.5% quantiles from
// scipy's t.ppf(0.975, df) (df 1: 12.7062047, 2: 4.30265273, 3: 3.18244631, 5: 2.57058184), not from the code under
// test (a printed table's 4.303 moves an interval's fourth decimal, which the report prints).
const close = (actual: readonly number[] | null, expected: readonly number[]) => {
  expect(actual).not.toBeNull();
  for (const [i, e] of expected.entries()) expect(actual?.[i]).toBeCloseTo(e, 5);
};

describe("intervals", () => {
  it("gives the Student t interval of a mean: 1, 2, 3 → 2 ± 4.30265273·1/√3 (scipy t.interval)", () => {
    const e = tInterval([1, 2, 3]);
    expect(e.mean).toBe(2);
    close(e.ci95, [-0.484138, 4.484138]);
  });

  it("gives no interval for one value and no mean for none", () => {
    expect(tInterval([0.4])).toEqual({ n: 1, mean: 0.4, ci95: null });
    expect(tInterval([])).toEqual({ n: 0, mean: null, ci95: null });
    expect(differenceInterval([0.4], "t")).toBeNull();
  });

  it("bootstraps the paired differences: constant differences give a point, 0 and 1 give [0, 1]", () => {
    close(differenceInterval([0.2, 0.2, 0.2], "bootstrap"), [0.2, 0.2]);
    // Resampled means of two values are 0, 0.5 or 1, with chances 1/4, 1/2, 1/4: the 2.5% and 97.5% quantiles are 0 and 1.
    expect(differenceInterval([0, 1], "bootstrap")).toEqual([0, 1]);
  });
});

describe("a cell over its seeds", () => {
  // Two tasks, three seeds. Final: 0.75, 0.5, 1.0 (mean 0.75, sd 0.25). Seed harness: 0.25, 0.25, 0.5.
  // Gains 0.5, 0.25, 0.5: mean 5/12, sd √(1/48), so the half-width is 4.30265273/12.
  const recs = [
    cellRecord({ method: "greedy", seed: 1, final: [0.5, 0.5], seedHarness: [0.5, 0], cost: { seconds: 20 } }),
    cellRecord({ method: "greedy", seed: 0, final: [0.5, 1], seedHarness: [0, 0.5], cost: { seconds: 10 } }),
    cellRecord({ method: "greedy", seed: 2, final: [1, 1], seedHarness: [0.5, 0.5], cost: { seconds: 30 } }),
  ];

  it("reports the final choice's test score as mean and 95% t interval over seeds", () => {
    const s = summarizeCell(recs);
    expect(s.seeds).toEqual([0, 1, 2]);
    expect(s.mean).toBeCloseTo(0.75, 10);
    close(s.ci95, [0.75 - (4.30265273 * 0.25) / Math.sqrt(3), 0.75 + (4.30265273 * 0.25) / Math.sqrt(3)]);
    close(s.ci95, [0.128966, 1.371034]);
  });

  it("reports its gain over the seed harness, paired by seed, and the mean cost per seed", () => {
    const s = summarizeCell(recs);
    expect(s.seed_harness.mean).toBeCloseTo(1 / 3, 10);
    expect(s.gain.mean).toBeCloseTo(5 / 12, 10);
    close(s.gain.ci95, [5 / 12 - 4.30265273 / 12, 5 / 12 + 4.30265273 / 12]);
    expect(s.cost.seconds).toBe(20);
    expect(s.cost.evaluator_calls).toBe(60);
  });

  it("signs the gain so that positive is better when lower scores are better", () => {
    const id = identity(() => {}, "minimize");
    const s = summarizeCell([
      cellRecord({ method: "m", seed: 0, final: [3], seedHarness: [5], identity: id }),
      cellRecord({ method: "m", seed: 1, final: [4], seedHarness: [5], identity: id }),
    ]);
    expect(s.gain.mean).toBe(1.5);
    // gains 2 and 1: sd √0.5, half-width 12.7062047 · √0.5 / √2 = 6.35310237
    close(s.gain.ci95, [1.5 - 6.35310237, 1.5 + 6.35310237]);
  });

  it("leaves out a seed whose final choice has an invalid task, and says why", () => {
    const s = summarizeCell([...recs.slice(0, 2), cellRecord({ method: "greedy", seed: 2, final: [1, null] })]);
    expect(s.measured_seeds).toEqual([0, 1]);
    expect(s.excluded).toEqual([{ seed: 2, reason: "final choice: 1 of 2 test tasks without a valid result (t2)" }]);
    expect(s.mean).toBeCloseTo(0.625, 10);
    // 0.75 and 0.5: sd √(1/32), half-width 12.7062047 · 0.125
    close(s.ci95, [0.625 - 12.7062047 * 0.125, 0.625 + 12.7062047 * 0.125]);
  });

  it("computes nothing for a cell whose seeds' identities differ, and names the component", () => {
    const other = identity((id) => (id.measurement.task.content = "decaf"));
    const s = summarizeCell([recs[0]!, cellRecord({ method: "greedy", seed: 3, final: [1, 1], identity: other })]);
    expect(s.mean).toBeNull();
    expect(s.identity_conflicts).toEqual(['task set content hash (measurement.task.content: "c0ffee" ≠ "decaf")']);
  });
});

describe("best-so-far curves", () => {
  it("steps at each improvement, in order of x, whatever order the points came in", () => {
    expect(
      bestSoFar(
        points([
          [20, 2],
          [0, 1],
          [30, 4],
          [10, 3],
        ]),
        "maximize",
      ),
    ).toEqual([
      { x: 0, best: 1 },
      { x: 10, best: 3 },
      { x: 30, best: 4 },
    ]);
    expect(
      bestSoFar(
        points([
          [0, 5],
          [10, 4],
          [10, 3],
          [20, 6],
        ]),
        "minimize",
      ),
    ).toEqual([
      { x: 0, best: 5 },
      { x: 10, best: 3 },
    ]);
  });

  it("bands the seeds on the shared x-axis: each seed's last best at or before x", () => {
    const band = curveBand(
      [
        points([
          [0, 1],
          [10, 3],
          [20, 2],
          [30, 4],
        ]),
        points([
          [5, 2],
          [10, 2.5],
          [25, 5],
        ]),
      ],
      "maximize",
    );
    expect(band).toEqual([
      { x: 0, n: 1, mean: 1, min: 1, max: 1 },
      { x: 5, n: 2, mean: 1.5, min: 1, max: 2 },
      { x: 10, n: 2, mean: 2.75, min: 2.5, max: 3 },
      { x: 25, n: 2, mean: 4, min: 3, max: 5 },
      { x: 30, n: 2, mean: 4.5, min: 4, max: 5 },
    ]);
  });
});

describe("paired comparisons against the baseline method", () => {
  const random = [
    cellRecord({ method: "random", seed: 0, final: [0, 1] }),
    cellRecord({ method: "random", seed: 1, final: [0.5, 0] }),
    cellRecord({ method: "random", seed: 2, final: [0.5, 1] }),
  ];
  const greedy = [
    cellRecord({ method: "greedy", seed: 0, final: [0.5, 1] }),
    cellRecord({ method: "greedy", seed: 1, final: [0.5, 0.5] }),
    cellRecord({ method: "greedy", seed: 2, final: [1, 1] }),
  ];
  const opts = { baseline: "random", interval: "t" as const };

  it("pairs per task and seed; no verdict while the interval includes zero", () => {
    // Differences 0.5, 0, 0, 0.5, 0.5, 0: mean 0.25, sd √0.075, half-width 2.57058184 · √0.075 / √6
    const c = comparePaired(greedy, random, opts);
    expect(c.status).toBe("compared");
    expect(c.n).toBe(6);
    expect(c.mean_difference).toBeCloseTo(0.25, 10);
    close(c.ci95, [-0.0374, 0.5374]);
    expect(c.verdict).toBeNull();
  });

  it("gives a verdict where the interval excludes zero", () => {
    // Differences 0.5, 0.25, 0.5, 0.25: mean 0.375, sd √(1/48), half-width 3.18244631 · √(1/48) / 2
    const a = [cellRecord({ method: "a", seed: 0, final: [1, 0.5] }), cellRecord({ method: "a", seed: 1, final: [1, 0.5] })];
    const b = [
      cellRecord({ method: "random", seed: 0, final: [0.5, 0.25] }),
      cellRecord({ method: "random", seed: 1, final: [0.5, 0.25] }),
    ];
    const better = comparePaired(a, b, opts);
    close(better.ci95, [0.145327, 0.604673]);
    expect(better.verdict).toBe("better");
    expect(
      comparePaired(
        b.map((r) => ({ ...r, method: "b" })),
        a.map((r) => ({ ...r, method: "random" })),
        opts,
      ).verdict,
    ).toBe("worse");
  });

  it("signs differences by direction: higher scores are worse when the task minimises", () => {
    const id = identity(() => {}, "minimize");
    const a = [
      cellRecord({ method: "a", seed: 0, final: [2], identity: id }),
      cellRecord({ method: "a", seed: 1, final: [3], identity: id }),
    ];
    const b = [
      cellRecord({ method: "random", seed: 0, final: [1], identity: id }),
      cellRecord({ method: "random", seed: 1, final: [1], identity: id }),
    ];
    expect(pairedDifferences(a, b, "minimize").diffs).toEqual([-1, -2]);
  });

  it("leaves out pairs with an invalid side and seeds only one method ran, and counts them", () => {
    const g = [
      ...greedy.slice(0, 2),
      cellRecord({ method: "greedy", seed: 2, final: [1, null] }),
      cellRecord({ method: "greedy", seed: 7, final: [1, 1] }),
    ];
    const c = comparePaired(g, random, opts);
    expect(c.n).toBe(5);
    expect(c.left_out).toEqual({ seeds_unpaired: [7], invalid_pairs: 1 });
  });

  it("uses the paired bootstrap when asked", () => {
    const c = comparePaired(greedy, random, { baseline: "random", interval: "bootstrap" });
    expect(c.interval).toBe("bootstrap");
    expect(c.ci95).toEqual(pairedInterval([0.5, 0, 0, 0.5, 0.5, 0], { seed: 0 }));
    expect(c.ci95?.[0]).toBeGreaterThanOrEqual(0);
    expect(c.ci95?.[1]).toBeLessThanOrEqual(0.5);
  });

  it.each([
    ["budget size", (id: ReturnType<typeof identity>) => (id.budget.size = 80), "budget size (budget.size: 60 ≠ 80)"],
    [
      "budget unit",
      (id: ReturnType<typeof identity>) => (id.budget.unit = "seconds"),
      'budget unit (budget.unit: "evaluator_calls" ≠ "seconds")',
    ],
    [
      "task set",
      (id: ReturnType<typeof identity>) => (id.measurement.task.id = "gsm8k/train"),
      'task set (measurement.task.id: "gsm8k/test" ≠ "gsm8k/train")',
    ],
    [
      "task set content hash",
      (id: ReturnType<typeof identity>) => (id.measurement.task.content = "beef"),
      'task set content hash (measurement.task.content: "c0ffee" ≠ "beef")',
    ],
    ["scorer", (id: ReturnType<typeof identity>) => (id.scorer = "gsm8k flexible-extract"), "scorer (scorer:"],
    [
      "executor model",
      (id: ReturnType<typeof identity>) => (id.measurement.executor.model = "qwen"),
      'executor model (measurement.executor.model: "offline" ≠ "qwen")',
    ],
    [
      "proposer model",
      (id: ReturnType<typeof identity>) => (id.proposer.model = "qwen"),
      'proposer model (proposer.model: "offline" ≠ "qwen")',
    ],
    ["split", (id: ReturnType<typeof identity>) => (id.split = "validation"), 'split (split: "test" ≠ "validation")'],
    ["repeats", (id: ReturnType<typeof identity>) => (id.repeats = 3), "repeats (repeats: 1 ≠ 3)"],
  ])("refuses cells whose %s differs, naming it", (_what, change, line) => {
    const other = identity(change);
    const g = greedy.map((r) => ({ ...r, identity: other }));
    const c = comparePaired(g, random, opts);
    expect(c.status).toBe("refused");
    expect(c.differences).toHaveLength(1);
    expect(c.differences[0]).toContain(line);
    expect(c.ci95).toBeNull();
    expect(c.verdict).toBeNull();
  });
});

describe("the report", () => {
  it("groups by cell, the baseline first, and compares each method with the baseline on its benchmark and harness", () => {
    const recs = [
      cellRecord({ method: "greedy", seed: 0, final: [1] }),
      cellRecord({ method: "random", seed: 0, final: [0] }),
      cellRecord({ method: "random", seed: 1, final: [0] }),
      cellRecord({ method: "greedy", seed: 1, final: [1] }),
      cellRecord({ benchmark: "other", method: "greedy", seed: 0, final: [1] }),
    ];
    const r = buildReport(recs, { pending: ["x+y+z/seed-0"] });
    expect(r.cells.map((c) => c.cell)).toEqual(["gsm8k-slice+qa+random", "gsm8k-slice+qa+greedy", "other+qa+greedy"]);
    expect(r.comparisons.map((c) => [c.benchmark, c.method, c.status, c.verdict])).toEqual([
      ["gsm8k-slice", "greedy", "compared", "better"],
      ["other", "greedy", "no_baseline", null],
    ]);
    expect(r.pending).toEqual(["x+y+z/seed-0"]);
  });

  it("takes another baseline by name", () => {
    const recs = [cellRecord({ method: "greedy", seed: 0, final: [1] }), cellRecord({ method: "random", seed: 0, final: [0] })];
    const r = buildReport(recs, { baseline: "greedy" });
    expect(r.cells[0]?.method).toBe("greedy");
    expect(r.comparisons).toMatchObject([
      { method: "random", baseline: "greedy", n: 1, mean_difference: -1, ci95: null, verdict: null },
    ]);
  });
});
