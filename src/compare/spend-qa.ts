// A QA cell's spend and curve from its search's records: a pure function of the rows store/qa-spend.ts and
// store/cell-spend.ts read. Each question answered and scored is one evaluator call.
import type { SpendRound } from "../store/cell-spend.ts";
import type { SpendMeasurement } from "../store/qa-spend.ts";
import type { CellCost, CurvePoint } from "./cell.ts";
import type { BudgetUnit } from "./experiment.ts";
import { costMinus, type Spend, ZERO } from "./spend.ts";

const secondsOf = (from: string, to: string | null) => (to ? Math.max(0, (Date.parse(to) - Date.parse(from)) / 1000) : 0);

function plus(a: CellCost, m: SpendMeasurement): CellCost {
  return {
    ...a,
    executor_tokens: a.executor_tokens + m.tokens,
    evaluator_calls: a.evaluator_calls + m.questions,
    seconds: a.seconds + secondsOf(m.started_at, m.finished_at),
  };
}

/**
 * Walks the finished rounds in order: a round's proposer calls first, then its train measurements (each a curve point:
 * the candidate's train mean at the spend once it is measured); after the rounds, the final choice's validation
 * measurement, which counts in the cost but is no point of the train curve. A round's seconds are its measurements'
 * (they run one after another) or its wall time where that is longer.
 */
export function qaCellSpend(rounds: readonly SpendRound[], measurements: readonly SpendMeasurement[], unit: BudgetUnit): Spend {
  let total = ZERO;
  const perRound: Spend["rounds"] = [];
  const curve: CurvePoint[] = [];
  const train = measurements.filter((m) => m.split === "train");
  for (const r of rounds.filter((x) => x.status === "finished")) {
    const before = total;
    let at: CellCost = {
      ...total,
      proposer_calls: total.proposer_calls + r.proposer_calls,
      proposer_tokens: total.proposer_tokens + r.proposer_tokens,
    };
    for (const m of train.filter((x) => x.round === r.round)) {
      at = plus(at, m);
      if (m.mean !== null) curve.push({ x: at[unit], score: m.mean, measured_by: "hone" });
    }
    const wall = secondsOf(r.started_at, r.finished_at);
    total = { ...at, seconds: Math.max(at.seconds, before.seconds + wall) };
    perRound.push({ round: r.round, cost: costMinus(total, before) });
  }
  for (const m of measurements.filter((x) => x.split === "validation")) total = plus(total, m);
  return {
    cost: { ...total, seconds: Math.round(total.seconds * 1000) / 1000 },
    rounds: perRound,
    curve: curve.map((p) => ({ ...p, x: Math.round(p.x * 1000) / 1000 })),
  };
}
