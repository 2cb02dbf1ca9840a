import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { roundCalls, roundsAfterRefutation, roundsForCalls } from "../../src/compare/budget.ts";
import { plannedRounds } from "../../src/compare/search.ts";
import type { OptimizeSettings } from "../../src/loop/optimize.ts";
import { type Db, openDb } from "../../src/store/db.ts";
import { saveNoise, saveRefutedRound } from "../../src/store/noise.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A measured deterministic evaluator is confirmed at a promotion by N re-evaluations of the winner, not compared by
// N·(1 + K) as a stochastic one: planning it as stochastic left experiments/demo.yaml (18 calls) with no round of
// proposals, so every method tied. Once a confirmation refutes it, the rounds after are planned again, as
// stochastic, from what the records show was spent.

const shape = { proposals: 2, maxEvals: 3, noiseRepeats: 3, paired: false };

describe("evaluator calls reserved per round", () => {
  it("a measured deterministic evaluator reserves its rollouts and one confirmation of N", () => {
    expect(roundCalls(shape, "unconfirmed")).toBe(6 + 3);
    expect(roundCalls(shape, true)).toBe(6 + 3 * 3);
    expect(roundCalls(shape, false)).toBe(6);
    expect(roundCalls({ ...shape, noiseRepeats: 1 }, "unconfirmed")).toBe(6); // nothing to confirm with
    expect(roundCalls({ ...shape, paired: true }, "unconfirmed")).toBe(12 + 3);
    // experiments/demo.yaml: 18 calls, round 0 spent 2 seed repeats, a rollout of 3 and 3 confirmations.
    expect(roundsForCalls(18, 8, shape, "unconfirmed")).toBe(1);
  });

  it("after a refutation, the rounds up to it and the stochastic rounds that fit in what is left", () => {
    expect(roundsAfterRefutation(60, 23, 1, shape)).toBe(1 + 2); // (60 − 23) / 15
    expect(roundsAfterRefutation(30, 23, 1, shape)).toBe(1);
    expect(roundsAfterRefutation(20, 23, 1, shape)).toBe(1); // overrun: never fewer rounds than already run
  });
});

let dir: string;
let db: Db;
const settings = { proposals: 2, maxEvals: 3, noiseRepeats: 3, paired: false, method: "harnessttt" } as OptimizeSettings;
const plan = (size: number) => plannedRounds({ dir, budget: { unit: "evaluator_calls", size }, direction: "maximize", settings });

function round(r: number, rolloutCalls: number, noise: [purpose: string, n: number][]) {
  db.prepare(
    "INSERT INTO rounds (run_id, round, status, incumbent_commit, started_at) VALUES ('run', ?, 'finished', 'c', 'now')",
  ).run(r);
  db.prepare(
    "INSERT INTO rollouts (id, run_id, round, candidate_id, kind, seed, status, evals_used) VALUES (?, 'run', ?, ?, 'candidate', 0, 'completed', ?)",
  ).run(`r${r}`, r, `r${r}`, rolloutCalls);
  let idx = 0;
  for (const [purpose, n] of noise)
    for (let i = 0; i < n; i++)
      db.prepare(
        "INSERT INTO noise_evaluations (run_id, round, program_sha, idx, purpose, valid, score, result) VALUES ('run', ?, ?, ?, ?, 1, 0, '{}')",
      ).run(r, `${purpose}-${r}`, idx++, purpose);
}

function noise(basis: string, stochastic: number, refutedIn?: number) {
  saveNoise(db, "run", { program_sha: "s", repeats: 3, stochastic, basis, n: 2, invalid: 0, mean: 0, sd: 0, spread: 0 });
  if (refutedIn !== undefined) saveRefutedRound(db, refutedIn);
}

beforeEach(() => {
  dir = tempDir("hone-plan-");
  db = openDb(join(dir, "hone.db"));
  // Round 0: the seed's 2 agreeing repeats, its rollout's 3 calls and the 3 confirming its promotion: 8.
  round(0, 3, [
    ["seed", 2],
    ["candidate", 3],
  ]);
});

describe("the rounds a cell plans from its records", () => {
  it("a measured deterministic evaluator: (size − round 0) / (K·maxEvals + N)", () => {
    noise("measured", 0);
    expect(plan(18)).toBe(1); // was 0: planned as stochastic, (18 − 8) / 15
    expect(plan(44)).toBe(4);
    noise("measured", 1);
    expect(plan(44)).toBe(2); // stochastic: (44 − 8) / 15
  });

  it("refuted in round 1: planned again from what rounds 0 and 1 spent, the same on every ask and on resume", () => {
    noise("measured", 0);
    expect(plan(44)).toBe(4);
    // Round 1's confirmation refuted; it decided again by the noise rule (the incumbent's 3, the other candidate's 3).
    round(1, 6, [
      ["candidate", 3],
      ["incumbent", 3],
      ["control", 3],
    ]);
    noise("refuted", 1, 1);
    expect(plan(44)).toBe(1 + 1); // 8 + 15 spent, (44 − 23) / 15 = 1 more, not the 3 more planned before
    round(2, 6, [
      ["incumbent", 3],
      ["candidate", 3],
    ]);
    expect(plan(44)).toBe(2); // a later round changes nothing: the plan rests on rounds 0–1
  });

  it("killed in the refuting round before the incumbent was re-evaluated: that round still runs", () => {
    noise("measured", 0);
    round(1, 6, [["candidate", 3]]);
    noise("refuted", 1, 1);
    expect(plan(20)).toBe(1); // round 1 is allowed again: 1 + (20 − 17) / 15, though (20 − 8) / 15 is 0
  });

  it("refuted in round 0 is planned as stochastic from round 0's spend", () => {
    noise("refuted", 1, 0);
    expect(plan(44)).toBe(2); // (44 − 8) / 15
  });

  it("takes the refuting round the run recorded, not the first round that re-evaluated the incumbent", () => {
    noise("measured", 0);
    // Round 1's winner shared the incumbent's program: its repeats were reused, so no incumbent row was written.
    round(1, 6, [["candidate", 3]]);
    noise("refuted", 1, 1);
    round(2, 6, [
      ["incumbent", 3],
      ["candidate", 3],
    ]);
    expect(plan(44)).toBe(1 + 1); // rounds 0–1 spent 17: (44 − 17) / 15 = 1 more, not planned from rounds 0–2
  });
});
