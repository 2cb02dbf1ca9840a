import { describe, expect, it } from "vitest";
import { qaFixedCalls, qaRoundsForCalls } from "../../src/compare/budget.ts";
import { runnableProblems } from "../../src/compare/cell-settings.ts";
import type { Experiment } from "../../src/compare/experiment.ts";
import { questionResult } from "../../src/compare/measure-qa.ts";
import { testSplitOf } from "../../src/compare/qa-cell.ts";
import { methodClaims } from "../../src/compare/run-cell.ts";
import { qaCellSpend } from "../../src/compare/spend-qa.ts";
import type { SpendRound } from "../../src/store/cell-spend.ts";
import type { SpendMeasurement } from "../../src/store/qa-spend.ts";

const round = (r: number, calls: number, tokens: number, from: string, to: string): SpendRound => ({
  round: r,
  status: "finished",
  started_at: from,
  finished_at: to,
  proposer_calls: calls,
  proposer_tokens: tokens,
  noise_evaluations: 0,
  noise_seconds: 0,
  noise_first_score: null,
});
const measured = (
  id: string,
  r: number,
  split: string,
  questions: number,
  mean: number | null,
  sec: number,
): SpendMeasurement => ({
  id,
  round: r,
  split,
  questions,
  tokens: questions * 100,
  mean,
  started_at: "2026-01-01T00:00:00.000Z",
  finished_at: new Date(Date.parse("2026-01-01T00:00:00.000Z") + sec * 1000).toISOString(),
});

describe("a QA cell's budget in evaluator calls (one per question answered)", () => {
  it("pays for the seed harness on train and the choice on validation, then K candidates × train per round", () => {
    expect(qaFixedCalls(4, 2)).toBe(6);
    expect(qaRoundsForCalls(14, 4, 2, 2)).toBe(1); // (14 − 6) / 8
    expect(qaRoundsForCalls(21, 4, 2, 2)).toBe(1); // 15 / 8
    expect(qaRoundsForCalls(22, 4, 2, 2)).toBe(2);
    expect(qaRoundsForCalls(5, 4, 2, 2)).toBe(0); // never negative
    expect(qaRoundsForCalls(1e12, 1, 0, 1)).toBe(1000); // MAX_ROUNDS
  });

  it("refuses before anything runs a row whose limits alone cost more than the budget, naming budget.size", () => {
    const exp = {
      file: "x.yaml",
      budget: { unit: "evaluator_calls", size: 5 },
      tasks: [],
      benchmarks: [{ benchmark: "gsm8k", splits: { train: { limit: 4 }, validation: { limit: 2 }, test: { limit: 2 } } }],
    } as unknown as Experiment;
    expect(runnableProblems(exp)).toEqual([{ field: "budget.size", message: expect.stringMatching(/take 6 evaluator calls/) }]);
    expect(runnableProblems({ ...exp, budget: { unit: "evaluator_calls", size: 6 } })).toEqual([]);
    expect(runnableProblems({ ...exp, budget: { unit: "seconds", size: 1 } })).toEqual([]);
  });
});

describe("a QA cell's spend and curve", () => {
  it("counts each round's proposer calls and its train measurements, then the validation measurement in the cost only", () => {
    const rounds = [
      round(0, 0, 0, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
      round(1, 1, 500, "2026-01-01T00:00:01Z", "2026-01-01T00:00:04Z"),
    ];
    const ms = [
      measured("r00-seed", 0, "train", 4, 0.25, 1),
      measured("r01-k0", 1, "train", 4, 0.5, 1),
      measured("r01-k1", 1, "train", 4, null, 1), // every question an infrastructure failure: no point
      measured("r01-k0-validation", 2, "validation", 2, 1, 0.5),
    ];
    const s = qaCellSpend(rounds, ms, "evaluator_calls");
    expect(s.curve).toEqual([
      { x: 4, score: 0.25, measured_by: "hone" },
      { x: 8, score: 0.5, measured_by: "hone" },
    ]);
    expect(s.cost).toEqual({ proposer_calls: 1, proposer_tokens: 500, executor_tokens: 1400, evaluator_calls: 14, seconds: 4.5 });
    // Round 1: 3 s of wall time is longer than its two 1 s measurements.
    expect(s.rounds.map((r) => [r.round, r.cost.evaluator_calls, r.cost.seconds])).toEqual([
      [0, 4, 1],
      [1, 8, 3],
    ]);
    expect(qaCellSpend(rounds, ms, "proposer_tokens").curve.map((p) => p.x)).toEqual([0, 500]);
  });
});

describe("a QA cell's test measurement", () => {
  const answer = (status: "completed" | "failed", score: number, error?: string) => ({
    id: "q1",
    status,
    correct: score === 1,
    score,
    error,
    modelCalls: 1,
    tokens: 10,
  });
  it("scores a question by the mean of its completed repeats; none completed is invalid with the reason", () => {
    expect(questionResult("q1", [answer("completed", 1), answer("completed", 0)])).toEqual({
      task: "q1",
      score: 0.5,
      valid: true,
    });
    expect(questionResult("q1", [answer("failed", 0, "timeout"), answer("completed", 1)])).toEqual({
      task: "q1",
      score: 1,
      valid: true,
      reason: "1 of 2 repeats not completed (timeout): scored on the other 1",
    });
    expect(questionResult("q1", [answer("failed", 0, "endpoint down")])).toEqual({
      task: "q1",
      score: null,
      valid: false,
      reason: "no completed answer in 1 repeat(s): endpoint down",
    });
  });

  it("measures a test-only benchmark on its test file without the search pool, any other on its test file", () => {
    expect(testSplitOf("gsm8k")).toBe("test");
    expect(testSplitOf("mbpp")).toBe("test");
    for (const id of ["humaneval", "math500", "aime2024", "hotpotqa"]) expect(testSplitOf(id)).toBe("test-heldout");
  });
});

describe("what a method claims of its own choice", () => {
  it("keeps the search's train (and validation) score of the final candidate, at the spend it ended with", () => {
    expect(methodClaims({ candidate: "r01-k0", train_score: 0.5, validation_score: 1 }, 14)).toEqual([
      { x: 14, score: 0.5, split: "train", candidate: "r01-k0", note: expect.any(String) },
      { x: 14, score: 1, split: "validation", candidate: "r01-k0", note: expect.any(String) },
    ]);
    // A discovery run's meta.json names its incumbent's score; the seed when no candidate is named.
    expect(methodClaims({ score: 0.9 }, 3)).toEqual([
      { x: 3, score: 0.9, split: "train", candidate: "r00-seed", note: expect.any(String) },
    ]);
    expect(methodClaims({ candidate: "r00-seed", score: null }, 3)).toEqual([]);
  });
});
