import { describe, expect, it } from "vitest";
import { questionResult } from "../../src/compare/measure-qa.ts";
import { type RepeatResult, taskResult } from "../../src/compare/measure-test.ts";
import { buildReport } from "../../src/compare/report.ts";
import { reportText } from "../../src/compare/text.ts";
import { cellRecord } from "./records.ts";

// The test split is measured with the same repeats everywhere, and a task's score is the mean of its valid repeats.
// A final choice that wrote no valid program in one of two repeats was scored on the other alone, with nothing said:
// a flaky harness looked as good as its lucky repeat, beside a seed harness measured on both.

const repeat = (score: number | null, error?: string): RepeatResult => ({
  best_score: score,
  best_valid: score !== null,
  status: score === null ? "failed" : "completed",
  ...(error ? { error } : {}),
  harness: { content_hash: "h" },
});

describe("a task scored on fewer repeats than were made says so", () => {
  it("keeps the mean of the valid repeats, with how many it rests on and why the others gave none", () => {
    expect(taskResult("circle-packing", [repeat(1.2), repeat(1.0)])).toEqual({ task: "circle-packing", score: 1.1, valid: true });
    expect(taskResult("circle-packing", [repeat(null, "the program timed out"), repeat(1.2)])).toEqual({
      task: "circle-packing",
      score: 1.2,
      valid: true,
      reason: "1 of 2 repeats without a valid program (the program timed out): scored on the other 1",
    });
    expect(taskResult("circle-packing", [repeat(null, "boom"), repeat(null)])).toMatchObject({ valid: false, score: null });
  });

  it("says the same of a QA question answered in only some repeats", () => {
    const a = (status: "completed" | "failed", score: number, error?: string) =>
      ({ id: "q1", status, score, ...(error ? { error } : {}) }) as Parameters<typeof questionResult>[1][number];
    expect(questionResult("q1", [a("completed", 1), a("failed", 0, "endpoint 503"), a("completed", 0)])).toEqual({
      task: "q1",
      score: 0.5,
      valid: true,
      reason: "1 of 3 repeats not completed (endpoint 503): scored on the other 2",
    });
    expect(questionResult("q1", [a("completed", 1), a("completed", 0)])).toEqual({ task: "q1", score: 0.5, valid: true });
  });

  it("names each such task in the report's notes and JSON, and still counts its score", () => {
    const r = cellRecord({ method: "greedy", seed: 1, final: [1, 0.5], seedHarness: [0.5, 0.5] });
    const t2 = r.final.tasks[1];
    if (t2) t2.reason = "1 of 2 repeats without a valid program (timed out): scored on the other 1";
    const report = buildReport([cellRecord({ method: "random", seed: 1, final: [0.5, 0.5] }), r]);
    const greedy = report.cells.find((c) => c.method === "greedy");
    expect(greedy?.mean).toBe(0.75);
    expect(greedy?.partial).toEqual([
      { seed: 1, side: "final", task: "t2", reason: "1 of 2 repeats without a valid program (timed out): scored on the other 1" },
    ]);
    expect(reportText(report)).toContain(
      "gsm8k-slice+qa+greedy: seed 1, final choice on t2: 1 of 2 repeats without a valid program (timed out): scored on the other 1",
    );
  });
});

describe("many tasks short of repeats", () => {
  it("names the first five per cell and counts the rest", () => {
    const r = cellRecord({ method: "greedy", seed: 0, final: [1, 1, 1, 1, 1, 1, 1, 1] });
    for (const t of r.final.tasks) t.reason = "1 of 2 repeats not completed (503): scored on the other 1";
    const text = reportText(buildReport([cellRecord({ method: "random", seed: 0, final: Array(8).fill(0) }), r]));
    expect(text.match(/final choice on t\d: 1 of 2 repeats/g)).toHaveLength(5);
    expect(text).toContain("gsm8k-slice+qa+greedy: 3 more tasks scored on fewer repeats than made (--json lists them)");
  });
});

// A seed whose final choice had no valid result was left out of the test mean but kept in the seed harness's, so the
// table's gain was not test − seed harness: 0.8 over seed 0 against 0.6 over seeds 0 and 1, and a gain of 0.3.
describe("the seed harness row is over the seeds the test mean is over", () => {
  it("gives gain = test − seed harness when a seed's final choice is left out", async () => {
    const { summarizeCell } = await import("../../src/compare/report.ts");
    const s = summarizeCell([
      cellRecord({ method: "greedy", seed: 0, final: [0.8], seedHarness: [0.5] }),
      cellRecord({ method: "greedy", seed: 1, final: [null], seedHarness: [0.7] }),
    ]);
    expect(s.measured_seeds).toEqual([0]);
    expect([s.mean, s.seed_harness.mean, s.gain.mean]).toEqual([0.8, 0.5, 0.30000000000000004]);
    expect(s.seed_harness.n).toBe(1);
  });
});
