// A cell's search: an ordinary optimize run in the cell's folder, round 0 first, then as many rounds of proposals as
// the budget allows (planned up front for evaluator calls, checked round by round for the other units). Resumable:
// every step starts from what the run's hone.db holds.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type OptimizeEvent, type OptimizeSettings, optimize } from "../loop/optimize.ts";
import type { Direction } from "../measure/compare.ts";
import { methodByName, methodParams } from "../method/registry.ts";
import { spendRollouts, spendRounds } from "../store/cell-spend.ts";
import { type Db, openDb } from "../store/db.ts";
import { loadNoise, type NoiseRow, refutedRoundOf } from "../store/noise.ts";
import { spendMeasurements } from "../store/qa-spend.ts";
import {
  anotherRound,
  MAX_ROUNDS,
  type PlannedNoise,
  qaRoundsForCalls,
  type RoundShape,
  roundsAfterRefutation,
  roundsForCalls,
} from "./budget.ts";
import type { BudgetUnit } from "./experiment.ts";
import { cellSpend, type Spend } from "./spend.ts";
import { qaCellSpend } from "./spend-qa.ts";

export interface SearchOptions {
  dir: string;
  settings: OptimizeSettings;
  budget: { unit: BudgetUnit; size: number };
  direction: Direction;
  /** A QA cell: the sizes of its train and validation slices (its search is measured question by question). */
  qa?: QASlices;
  onEvent?: (e: OptimizeEvent) => void;
}

export interface QASlices {
  train: number;
  validation: number;
}

export interface SearchResult {
  spend: Spend;
  /** Rounds of proposals run after the seed round. */
  rounds: number;
}

/** The cell's spend and curve so far, from its records. */
export function readSpend(dir: string, unit: BudgetUnit, direction: Direction, qa?: QASlices): Spend {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    if (qa) return qaCellSpend(spendRounds(db), spendMeasurements(db), unit);
    return cellSpend(spendRounds(db), spendRollouts(db), unit, direction);
  } finally {
    db.close();
  }
}

/** What the cell's evaluator calls are planned for, from its noise row (`PlannedNoise`). */
function plannedNoise(noise: NoiseRow | undefined): PlannedNoise {
  if (noise?.stochastic === 1) return true;
  // Measured deterministic: a promotion's confirmation re-evaluates the would-be winner (`confirmDeterministic`).
  return noise?.basis === "measured" && noise.repeats >= 2 ? "unconfirmed" : false;
}

/** The round whose promotion's confirmation refuted a measured deterministic evaluator, as the run recorded it. */
function refutedRound(db: Db): number {
  return refutedRoundOf(db) ?? 0;
}

/**
 * The rounds of proposals a cell with a budget of evaluator calls runs, from its records alone (so a resumed cell
 * plans the same): what fits after round 0's spend at the cost its noise calls for; once a confirmation refuted a
 * measured deterministic evaluator, planned again from what the rounds up to that one spent.
 */
export function plannedRounds(o: Pick<SearchOptions, "dir" | "budget" | "direction" | "settings">): number {
  const { size } = o.budget;
  const rounds = readSpend(o.dir, "evaluator_calls", o.direction).rounds;
  const seedSpent = rounds.find((r) => r.round === 0)?.cost.evaluator_calls ?? size;
  const db = openDb(join(o.dir, "hone.db"), { readonly: true });
  try {
    const noise = loadNoise(db, "run");
    const shape = shapeOf(o.settings);
    if (noise?.basis !== "refuted") return roundsForCalls(size, seedSpent, shape, plannedNoise(noise));
    const at = refutedRound(db);
    const spent = rounds.filter((r) => r.round <= at).reduce((a, r) => a + r.cost.evaluator_calls, 0);
    return roundsAfterRefutation(size, spent, at, shape);
  } finally {
    db.close();
  }
}

/**
 * Runs (or resumes) the cell's optimize run, asking before each round of proposals whether the budget allows it. A QA
 * run is finished once its summary.json is written; one stopped before that resumes from its records as a discovery
 * run does.
 */
async function optimizeCell(o: SearchOptions, cap: number, nextRound: (round: number) => boolean): Promise<void> {
  if (o.qa && existsSync(join(o.dir, "summary.json"))) return;
  const started = existsSync(join(o.dir, "hone.db"));
  // A folder killed before its hone.db appeared holds nothing recorded: start it again.
  if (!started && existsSync(o.dir) && readdirSync(o.dir).length > 0) rmSync(o.dir, { recursive: true, force: true });
  await optimize(
    { ...o.settings, rounds: cap },
    {
      outDir: o.dir,
      resume: started,
      // Where the rollouts run is this invocation's choice (a stored queue URL holds no password).
      overrides: { rounds: cap, queue: o.settings.queue, slurm: o.settings.slurm },
      // Stored without a key in their query: this invocation's URLs stand in for them.
      endpoints: { executor: o.settings.executor.baseUrl, proposer: o.settings.proposer.baseUrl },
      onEvent: o.onEvent,
      nextRound,
    },
  );
}

/**
 * The most proposals a round of the cell's method makes: K, or the method's own count where it does not make K (ace
 * and skillopt make one step a round), so a budget of evaluator calls buys every method as many rollouts.
 */
export function roundProposals(s: Pick<OptimizeSettings, "method" | "methodParams" | "proposals">): number {
  const method = methodByName(s.method ?? "harnessttt");
  return method.proposalsPerRound?.(s.proposals, methodParams(method, s.methodParams ?? {})) ?? s.proposals;
}

const shapeOf = (s: OptimizeSettings): RoundShape => ({
  proposals: roundProposals(s),
  maxEvals: s.maxEvals,
  noiseRepeats: s.noiseRepeats ?? 3,
  paired: s.paired,
});

/**
 * What each decision rests on: for evaluator calls, the rounds that fit once round 0 is recorded (what it spent, and
 * whether the evaluator proved stochastic, and once a confirmation refuted it, what the rounds up to then spent:
 * `plannedRounds`); for the other units, the rounds recorded before the one asked about. So a
 * resumed cell takes the same decisions again.
 */
function budgetRule(o: SearchOptions): (round: number) => boolean {
  const { unit, size } = o.budget;
  if (unit === "evaluator_calls" && o.qa) {
    const planned = qaRoundsForCalls(size, o.qa.train, o.qa.validation, roundProposals(o.settings));
    return (round) => round <= planned;
  }
  if (unit === "evaluator_calls") return (round) => round <= plannedRounds(o);
  return (round) => {
    const before = readSpend(o.dir, unit, o.direction, o.qa).rounds.filter((r) => r.round < round);
    const spent = before.reduce((a, r) => a + r.cost[unit], 0);
    return anotherRound(
      unit,
      size,
      spent,
      before.filter((r) => r.round > 0).map((r) => r.cost),
    );
  };
}

/** The most rounds a cell can run: for evaluator calls, what fits if every round spent only its rollouts' calls. */
function roundCap(o: SearchOptions): number {
  if (o.budget.unit !== "evaluator_calls") return MAX_ROUNDS;
  if (o.qa) return qaRoundsForCalls(o.budget.size, o.qa.train, o.qa.validation, roundProposals(o.settings));
  const s = shapeOf(o.settings);
  const least = s.proposals * (s.paired ? 2 : 1) * s.maxEvals;
  return Math.max(0, Math.min(MAX_ROUNDS, Math.floor(o.budget.size / least)));
}

/**
 * Round 0 (the seed program's repeats and the seed harness's rollout), then rounds of proposals while the budget
 * allows, in one optimize run (resumed where it stopped); the run's best/ is its final choice.
 */
export async function runSearch(o: SearchOptions): Promise<SearchResult> {
  await optimizeCell(o, roundCap(o), budgetRule(o));
  const spend = readSpend(o.dir, o.budget.unit, o.direction, o.qa);
  return { spend, rounds: spend.rounds.filter((r) => r.round > 0).length };
}
