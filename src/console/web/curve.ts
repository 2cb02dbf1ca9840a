import type { CandidateRow, Round } from "./types.ts";

export interface Curve {
  /** x positions: rounds for the best-so-far line, rounds spread by slot for the candidates. */
  x: number[];
  bestSoFar: (number | null)[];
  candidates: (number | null)[];
  invalid: (number | null)[];
  counts: { rounds: number; scored: number; invalid: number };
}

const better = (a: number, b: number, direction: "maximize" | "minimize") => (direction === "maximize" ? a > b : a < b);

/**
 * The run page's score curve: the best score so far after each round, each candidate's score at its round (spread
 * by slot so a round's candidates do not sit on one another), and candidates without a score (refused by the gate,
 * failed rollouts) drawn on the floor of the chart.
 */
export function runCurve(rounds: Round[], candidates: CandidateRow[], direction: "maximize" | "minimize"): Curve {
  const points = new Map<number, { best?: number | null; cand?: number | null; invalid?: number | null }>();
  const at = (x: number) => {
    const key = Math.round(x * 1000) / 1000;
    let p = points.get(key);
    if (!p) {
      p = {};
      points.set(key, p);
    }
    return p;
  };
  const finished = rounds.filter((r) => r.status === "finished");
  for (const [round, best] of bestSoFarByRound(rounds, direction)) at(round).best = best;
  const scored = candidates.filter((c) => c.round > 0 && c.score !== null);
  const unscored = candidates.filter((c) => c.round > 0 && c.score === null && c.status !== "pending" && c.status !== "seed");
  const values = [...scored.map((c) => c.score as number), ...finished.flatMap((r) => [r.incumbent_score ?? NaN])].filter(
    Number.isFinite,
  );
  const floor = values.length ? (direction === "maximize" ? Math.min(...values) : Math.max(...values)) : 0;
  const perRound = new Map<number, number>();
  for (const c of candidates) if (c.round > 0) perRound.set(c.round, Math.max(perRound.get(c.round) ?? 0, c.slot + 1));
  const spread = (c: CandidateRow) => {
    const k = perRound.get(c.round) ?? 1;
    return c.round + (k === 1 ? 0 : ((c.slot - (k - 1) / 2) / k) * 0.5);
  };
  for (const c of scored) at(spread(c)).cand = c.score;
  for (const c of unscored) at(spread(c)).invalid = floor;
  const xs = [...points.keys()].sort((a, b) => a - b);
  return {
    x: xs,
    bestSoFar: xs.map((x) => points.get(x)?.best ?? null),
    candidates: xs.map((x) => points.get(x)?.cand ?? null),
    invalid: xs.map((x) => points.get(x)?.invalid ?? null),
    counts: { rounds: finished.length, scored: scored.length, invalid: unscored.length },
  };
}

/** Best score so far per finished round, for comparing runs. */
export function bestSoFarByRound(rounds: Round[], direction: "maximize" | "minimize"): Map<number, number> {
  const out = new Map<number, number>();
  let best: number | null = null;
  for (const r of rounds.filter((x) => x.status === "finished")) {
    for (const v of [r.incumbent_score, r.best_score])
      if (v !== null && Number.isFinite(v) && (best === null || better(v, best, direction))) best = v;
    if (best !== null) out.set(r.round, best);
  }
  return out;
}
