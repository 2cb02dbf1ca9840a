import { describe, expect, it } from "vitest";
import { bestSoFarByRound, carried, curvePoints, runCurve } from "../../src/console/web/curve.ts";
import type { CurvePoint, Round } from "../../src/console/web/types.ts";

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
/** A candidate's point as the server classifies it: scored, refused or failed (no score), or not drawn. */
const cand = (
  _id: string,
  r: number,
  slot: number,
  score: number | null,
  status = score === null ? "invalid" : "valid",
): CurvePoint => ({
  round: r,
  slot,
  score,
  kind: score !== null ? 1 : status === "pending" || status === "seed" ? 0 : 2,
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

  it("reads the server's columns as points and carries the best so far between rounds for the legend", () => {
    const points = curvePoints({ round: [0, 1, 1], slot: [0, 0, 1], score: [null, 2.5, null], kind: [0, 1, 2] });
    expect(points).toEqual([
      { round: 0, slot: 0, score: null, kind: 0 },
      { round: 1, slot: 0, score: 2.5, kind: 1 },
      { round: 1, slot: 1, score: null, kind: 2 },
    ]);
    const c = runCurve([round(0, 1, 1), round(1, 1, 2.5)], points, "maximize");
    expect(c.round).toEqual([0, 1, 1, 1]);
    expect(c.slot).toEqual([null, 0, null, 1]);
    expect(c.x.map((_, i) => carried(c.bestSoFar, i))).toEqual([1, 1, 2.5, 2.5]);
    expect(carried([null, null], 1)).toBeNull();
  });
});
