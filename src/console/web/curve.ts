import type { CurveColumns, CurvePoint, Round } from "./types.ts";

export interface Curve {
  /** x positions: rounds for the best-so-far line, rounds spread by slot for the candidates. */
  x: number[];
  bestSoFar: (number | null)[];
  candidates: (number | null)[];
  invalid: (number | null)[];
  /** The round and the candidate's slot at each x (slot null where only a round's best so far sits). */
  round: number[];
  slot: (number | null)[];
  counts: { rounds: number; scored: number; invalid: number };
}

const better = (a: number, b: number, direction: "maximize" | "minimize") => (direction === "maximize" ? a > b : a < b);

/** The columns the server sends, as points. */
export function curvePoints(c: CurveColumns): CurvePoint[] {
  return c.round.map((round, i) => ({
    round,
    slot: c.slot[i] as number,
    score: c.score[i] ?? null,
    kind: c.kind[i] as number,
  }));
}

/**
 * The run page's score curve: the best score so far after each round, each candidate's score at its round (spread
 * by slot so a round's candidates do not sit on one another), and candidates without a score (refused by the gate,
 * failed rollouts) drawn on the floor of the chart.
 */
export function runCurve(rounds: Round[], candidates: CurvePoint[], direction: "maximize" | "minimize"): Curve {
  const points = new Map<number, { round: number; slot?: number; best?: number; cand?: number | null; invalid?: number }>();
  const at = (x: number, round: number) => {
    const key = Math.round(x * 1000) / 1000;
    let p = points.get(key);
    if (!p) {
      p = { round };
      points.set(key, p);
    }
    return p;
  };
  const finished = rounds.filter((r) => r.status === "finished");
  for (const [round, best] of bestSoFarByRound(rounds, direction)) at(round, round).best = best;
  const scored = candidates.filter((c) => c.round > 0 && c.kind === 1 && c.score !== null);
  const unscored = candidates.filter((c) => c.round > 0 && c.kind === 2);
  let floor: number | null = null;
  for (const v of [...scored.map((c) => c.score as number), ...finished.map((r) => r.incumbent_score ?? Number.NaN)])
    if (Number.isFinite(v) && (floor === null || better(floor, v, direction))) floor = v;
  const perRound = new Map<number, number>();
  for (const c of candidates) if (c.round > 0) perRound.set(c.round, Math.max(perRound.get(c.round) ?? 0, c.slot + 1));
  const spread = (c: CurvePoint) => {
    const k = perRound.get(c.round) ?? 1;
    return c.round + (k === 1 ? 0 : ((c.slot - (k - 1) / 2) / k) * 0.5);
  };
  for (const c of scored) Object.assign(at(spread(c), c.round), { cand: c.score, slot: c.slot });
  for (const c of unscored) Object.assign(at(spread(c), c.round), { invalid: floor ?? 0, slot: c.slot });
  const xs = [...points.keys()].sort((a, b) => a - b);
  const get = (x: number) =>
    points.get(x) as { round: number; slot?: number; best?: number; cand?: number | null; invalid?: number };
  return {
    x: xs,
    bestSoFar: xs.map((x) => get(x).best ?? null),
    candidates: xs.map((x) => get(x).cand ?? null),
    invalid: xs.map((x) => get(x).invalid ?? null),
    round: xs.map((x) => get(x).round),
    slot: xs.map((x) => get(x).slot ?? null),
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

/** The last value at or before index `i` (the best so far holds between rounds); null when there is none. */
export function carried(values: (number | null)[], i: number): number | null {
  for (let k = Math.min(i, values.length - 1); k >= 0; k--) if (values[k] !== null) return values[k] as number;
  return null;
}
