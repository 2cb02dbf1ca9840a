// A cell's spend and curve from its search's records: pure functions of the rows store/cell-spend.ts reads.
import type { Direction } from "../measure/compare.ts";
import type { SpendRollout, SpendRound } from "../store/cell-spend.ts";
import type { CellCost, CurvePoint } from "./cell.ts";
import type { BudgetUnit } from "./experiment.ts";

export const ZERO: CellCost = { proposer_calls: 0, proposer_tokens: 0, executor_tokens: 0, evaluator_calls: 0, seconds: 0 };

const add = (a: CellCost, b: Partial<CellCost>): CellCost => ({
  proposer_calls: a.proposer_calls + (b.proposer_calls ?? 0),
  proposer_tokens: a.proposer_tokens + (b.proposer_tokens ?? 0),
  executor_tokens: a.executor_tokens + (b.executor_tokens ?? 0),
  evaluator_calls: a.evaluator_calls + (b.evaluator_calls ?? 0),
  seconds: a.seconds + (b.seconds ?? 0),
});

/** A round's wall time: from its start to its end, plus (round 0) the seed's repeats, made before it starts. */
function roundSeconds(r: SpendRound): number {
  const wall = r.finished_at ? Math.max(0, (Date.parse(r.finished_at) - Date.parse(r.started_at)) / 1000) : 0;
  return wall + (r.round === 0 ? r.noise_seconds : 0);
}

export interface Spend {
  /** What the finished rounds spent in all (the cell's cost of improving). */
  cost: CellCost;
  /** Per finished round, what it spent. */
  rounds: { round: number; cost: CellCost }[];
  /** Every measurement hone made while the method searched, at the spend so far when it was made. */
  curve: CurvePoint[];
}

/**
 * Walks the finished rounds in order: each round's proposer calls first, then its rollouts (slot order), then its
 * re-evaluations; a rollout's point is its own best valid score at the spend once it has finished (for seconds:
 * the time before its round plus its own, since a round's rollouts run side by side), the seed's first evaluation
 * the curve's first point.
 */
export function cellSpend(
  rounds: readonly SpendRound[],
  rollouts: readonly SpendRollout[],
  unit: BudgetUnit,
  direction: Direction,
): Spend {
  let total = ZERO;
  const perRound: Spend["rounds"] = [];
  const curve: CurvePoint[] = [];
  const point = (at: CellCost, score: number | null) => {
    if (score !== null && Number.isFinite(score)) curve.push({ x: at[unit], score, measured_by: "hone" });
  };
  for (const r of rounds.filter((x) => x.status === "finished")) {
    const before = total;
    let at = add(total, { proposer_calls: r.proposer_calls, proposer_tokens: r.proposer_tokens });
    if (r.round === 0) {
      at = add(at, { evaluator_calls: r.noise_evaluations, seconds: r.noise_seconds });
      point(at, r.noise_first_score);
    }
    const own = rollouts.filter((x) => x.round === r.round);
    let longest = 0;
    for (const x of own) {
      at = add(at, { executor_tokens: x.tokens, evaluator_calls: x.evals });
      longest = Math.max(longest, x.seconds);
      point({ ...at, seconds: at.seconds + x.seconds }, direction === "maximize" ? x.own_max : x.own_min);
    }
    const seconds = Math.max(roundSeconds(r), (r.round === 0 ? r.noise_seconds : 0) + longest);
    if (r.round !== 0) at = add(at, { evaluator_calls: r.noise_evaluations });
    total = { ...at, seconds: before.seconds + seconds };
    perRound.push({ round: r.round, cost: costMinus(total, before) });
  }
  return { cost: round3(total), rounds: perRound, curve: curve.map((p) => ({ ...p, x: Math.round(p.x * 1000) / 1000 })) };
}

/** What was spent between two totals. */
export function costMinus(a: CellCost, b: CellCost): CellCost {
  return {
    proposer_calls: a.proposer_calls - b.proposer_calls,
    proposer_tokens: a.proposer_tokens - b.proposer_tokens,
    executor_tokens: a.executor_tokens - b.executor_tokens,
    evaluator_calls: a.evaluator_calls - b.evaluator_calls,
    seconds: a.seconds - b.seconds,
  };
}

const round3 = (c: CellCost): CellCost => ({ ...c, seconds: Math.round(c.seconds * 1000) / 1000 });
