import { describe, expect, it } from "vitest";
import { bestSoFarByRound, runCurve } from "../../src/console/web/curve.ts";
import type { CandidateRow, Round } from "../../src/console/web/types.ts";

const round = (n: number, incumbent: number | null, best: number | null, status = "finished"): Round => ({
  round: n,
  status,
  incumbent_commit: "c",
  incumbent_score: incumbent,
  best_score: best,
  moved: 0,
  started_at: "",
  finished_at: null,
});
const cand = (
  id: string,
  r: number,
  slot: number,
  score: number | null,
  status = score === null ? "invalid" : "valid",
): CandidateRow => ({
  id,
  round: r,
  slot,
  status,
  score,
  reward: null,
  advantage: null,
  changed: [],
  gate_error: null,
  repaired: 0,
  commit_sha: null,
  parent: null,
});

describe("run curve", () => {
  it("keeps the best so far, one point per finished round, and every candidate at its round", () => {
    const rounds = [round(0, 1, 1.2), round(1, 1.2, 1.1), round(2, 1.2, 1.5), round(3, 1.5, null, "running")];
    const candidates = [
      cand("r00-seed", 0, 0, 1.2, "seed"),
      cand("r01-k0", 1, 0, 1.1),
      cand("r01-k1", 1, 1, null),
      cand("r02-k0", 2, 0, 1.5),
      cand("r02-k1", 2, 1, 1.3),
      cand("r03-k0", 3, 0, null, "pending"),
    ];
    const c = runCurve(rounds, candidates, "maximize");
    expect(c.counts).toEqual({ rounds: 3, scored: 3, invalid: 1 });
    expect(c.bestSoFar.filter((v) => v !== null)).toEqual([1.2, 1.2, 1.5]);
    expect(c.x).toEqual([...c.x].sort((a, b) => a - b));
    // a refused candidate sits on the floor of the chart (the lowest score shown), at its own slot's position
    const i = c.invalid.findIndex((v) => v !== null);
    expect(c.invalid[i]).toBe(1);
    expect(c.x[i]).toBeGreaterThan(1);
    expect(c.x[i]).toBeLessThan(1.5);
    expect(c.candidates.filter((v) => v !== null)).toHaveLength(3);
  });

  it("follows the direction: for a minimised metric the best so far only goes down, and the floor is the top", () => {
    const rounds = [round(0, 0.4, 0.38), round(1, 0.38, 0.39), round(2, 0.38, 0.36)];
    expect([...bestSoFarByRound(rounds, "minimize").values()]).toEqual([0.38, 0.38, 0.36]);
    const c = runCurve(rounds, [cand("r01-k0", 1, 0, 0.39), cand("r01-k1", 1, 1, null)], "minimize");
    expect(c.invalid.find((v) => v !== null)).toBe(0.4);
  });
});
