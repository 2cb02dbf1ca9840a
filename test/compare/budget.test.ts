import { describe, expect, it } from "vitest";
import { anotherRound, MAX_ROUNDS, roundCalls, roundsForCalls, seedRoundCalls } from "../../src/compare/budget.ts";
import type { CellCost } from "../../src/compare/cell.ts";
import { roundProposals } from "../../src/compare/search.ts";
import { cellSpend } from "../../src/compare/spend.ts";
import type { SpendRollout, SpendRound } from "../../src/store/cell-spend.ts";

const shape = { proposals: 2, maxEvals: 3, noiseRepeats: 3, paired: false };
const cost = (c: Partial<CellCost>): CellCost => ({
  proposer_calls: 0,
  proposer_tokens: 0,
  executor_tokens: 0,
  evaluator_calls: 0,
  seconds: 0,
  ...c,
});

describe("the budget in evaluator calls", () => {
  it("a round is K rollouts of max_evals, twice with paired controls, plus the repeats where the evaluator is noisy", () => {
    expect(roundCalls(shape, false)).toBe(6); // 2 × 3
    expect(roundCalls(shape, true)).toBe(6 + 3 * (1 + 2)); // and the incumbent's and each best program's 3 repeats
    expect(roundCalls({ ...shape, paired: true }, false)).toBe(12);
    expect(roundCalls({ ...shape, noiseRepeats: 1 }, true)).toBe(6); // one repeat measures no noise
    expect(seedRoundCalls(shape)).toBe(6);
  });

  it("as many rounds as fit after what round 0 spent, never a negative number", () => {
    expect(roundsForCalls(18, 6, shape, false)).toBe(2); // (18 − 6) / 6
    expect(roundsForCalls(17, 6, shape, false)).toBe(1);
    expect(roundsForCalls(18, 6, shape, true)).toBe(0); // 12 < 15
    expect(roundsForCalls(5, 6, shape, false)).toBe(0);
  });
});

describe("the budget in tokens or seconds", () => {
  it("another round while the costliest one so far still fits", () => {
    const r = [cost({ proposer_tokens: 400 }), cost({ proposer_tokens: 600 })];
    expect(anotherRound("proposer_tokens", 2000, 1000, [])).toBe(true); // nothing to judge by yet
    expect(anotherRound("proposer_tokens", 2000, 1400, r)).toBe(true); // 1400 + 600 ≤ 2000
    expect(anotherRound("proposer_tokens", 2000, 1401, r)).toBe(false);
    expect(anotherRound("proposer_tokens", 2000, 2000, [])).toBe(false); // spent
  });

  it("a round that spent nothing of the unit ends the search (random spends no proposer tokens)", () => {
    expect(anotherRound("proposer_tokens", 2000, 10, [cost({ evaluator_calls: 6 })])).toBe(false);
    expect(anotherRound("seconds", 60, 1, Array(MAX_ROUNDS).fill(cost({ seconds: 0.001 })))).toBe(false);
  });
});

describe("a cell's spend and curve from its rows", () => {
  const round = (r: Partial<SpendRound> & { round: number }): SpendRound => ({
    status: "finished",
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:00:10.000Z",
    proposer_calls: 0,
    proposer_tokens: 0,
    noise_evaluations: 0,
    noise_seconds: 0,
    noise_first_score: null,
    ...r,
  });
  const rollout = (r: Partial<SpendRollout> & { round: number; id: string }): SpendRollout => ({
    kind: "candidate",
    status: "finished",
    evals: 3,
    tokens: 100,
    seconds: 4,
    own_max: null,
    own_min: null,
    ...r,
  });

  it("adds each round's proposer calls, rollouts and repeats in order; each point at the spend once it was made", () => {
    const rounds = [
      round({ round: 0, noise_evaluations: 3, noise_seconds: 2, noise_first_score: 0.5 }),
      round({ round: 1, proposer_calls: 2, proposer_tokens: 800, noise_evaluations: 1 }),
      round({ round: 2, status: "rolling_out", proposer_calls: 2 }), // not finished: not counted
    ];
    const rollouts = [
      rollout({ round: 0, id: "seed", kind: "baseline", own_max: 0.6, own_min: 0.4 }),
      rollout({ round: 1, id: "a", own_max: 0.9, own_min: 0.7 }),
      rollout({ round: 1, id: "b", evals: 2, own_max: null }),
      rollout({ round: 2, id: "c", own_max: 5 }),
    ];
    const s = cellSpend(rounds, rollouts, "evaluator_calls", "maximize");
    // Round 0: 3 repeats + 3 calls; round 1: 3 + 2 calls + 1 re-evaluation. Seconds: round 0's 10 s of wall time plus
    // its 2 s of repeats made before it; round 1's 10 s.
    expect(s.cost).toEqual({ proposer_calls: 2, proposer_tokens: 800, executor_tokens: 300, evaluator_calls: 12, seconds: 22 });
    expect(s.rounds.map((r) => r.cost.evaluator_calls)).toEqual([6, 6]);
    expect(s.curve).toEqual([
      { x: 3, score: 0.5, measured_by: "hone" }, // the seed program's first repeat
      { x: 6, score: 0.6, measured_by: "hone" }, // the seed harness's rollout
      { x: 9, score: 0.9, measured_by: "hone" }, // rollout a; b found no valid program: no point
    ]);
    expect(cellSpend(rounds, rollouts, "evaluator_calls", "minimize").curve[2]).toEqual({
      x: 9,
      score: 0.7,
      measured_by: "hone",
    });
    expect(cellSpend(rounds, rollouts, "proposer_tokens", "maximize").curve.map((p) => p.x)).toEqual([0, 0, 800]);
  });
});

describe("roundProposals", () => {
  // What a round of evaluator calls is planned with: the proposals the method makes, not K when it makes fewer.
  it("is K for methods that make K, and the method's own count for the others", () => {
    expect(roundProposals({ method: "random", proposals: 4 })).toBe(4);
    expect(roundProposals({ proposals: 4 })).toBe(4);
    expect(roundProposals({ method: "ace", proposals: 4 })).toBe(1);
    expect(roundProposals({ method: "skillopt", proposals: 4 })).toBe(1);
    expect(roundProposals({ method: "greedy", proposals: 4 })).toBe(1);
    expect(roundProposals({ method: "greedy", methodParams: { proposals: 3 }, proposals: 4 })).toBe(3);
  });
});
