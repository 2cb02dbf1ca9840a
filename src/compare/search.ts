// A cell's search: an ordinary optimize run in the cell's folder, round 0 first, then as many rounds of proposals as
// the budget allows (planned up front for evaluator calls, checked round by round for the other units). Resumable:
// every step starts from what the run's hone.db holds.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type OptimizeEvent, type OptimizeSettings, optimize } from "../loop/optimize.ts";
import type { Direction } from "../measure/compare.ts";
import { spendRollouts, spendRounds } from "../store/cell-spend.ts";
import { openDb } from "../store/db.ts";
import { loadNoise } from "../store/noise.ts";
import { anotherRound, MAX_ROUNDS, type RoundShape, roundsForCalls } from "./budget.ts";
import type { BudgetUnit } from "./experiment.ts";
import { cellSpend, type Spend } from "./spend.ts";

export interface SearchOptions {
  dir: string;
  settings: OptimizeSettings;
  budget: { unit: BudgetUnit; size: number };
  direction: Direction;
  onEvent?: (e: OptimizeEvent) => void;
}

export interface SearchResult {
  spend: Spend;
  /** Rounds of proposals run after the seed round. */
  rounds: number;
}

/** The cell's spend and curve so far, from its records. */
export function readSpend(dir: string, unit: BudgetUnit, direction: Direction): Spend {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    return cellSpend(spendRounds(db), spendRollouts(db), unit, direction);
  } finally {
    db.close();
  }
}

function stochasticOf(dir: string): boolean {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    return loadNoise(db, "run")?.stochastic === 1;
  } finally {
    db.close();
  }
}

const finishedRounds = (s: Spend) => s.rounds.filter((r) => r.round > 0).length;

/** Runs (or resumes) the optimize run up to `rounds` rounds of proposals. */
async function upTo(o: SearchOptions, rounds: number): Promise<void> {
  const started = existsSync(join(o.dir, "hone.db"));
  // A folder killed before its hone.db appeared holds nothing recorded: start it again.
  if (!started && existsSync(o.dir) && readdirSync(o.dir).length > 0) rmSync(o.dir, { recursive: true, force: true });
  await optimize({ ...o.settings, rounds }, { outDir: o.dir, resume: started, overrides: { rounds }, onEvent: o.onEvent });
}

/**
 * Round 0 (the seed program's repeats and the seed harness's rollout), then rounds of proposals until the budget is
 * spent: for evaluator calls the rounds that fit are worked out from what round 0 spent and whether the evaluator
 * proved stochastic; for the other units one round at a time while the records show budget left.
 */
export async function runSearch(o: SearchOptions): Promise<SearchResult> {
  const { unit, size } = o.budget;
  const seeded = () => existsSync(join(o.dir, "hone.db")) && readSpend(o.dir, unit, o.direction).rounds.length > 0;
  let last = -1;
  const run = async (rounds: number) => {
    await upTo(o, rounds);
    last = rounds;
  };
  if (!seeded()) await run(0);
  let spend = readSpend(o.dir, unit, o.direction);
  let rounds: number;
  if (unit === "evaluator_calls") {
    const shape: RoundShape = {
      proposals: o.settings.proposalsPerRound,
      maxEvals: o.settings.maxMetricCalls,
      noiseRepeats: o.settings.noiseRepeats ?? 3,
      paired: o.settings.paired,
    };
    const seedSpent = spend.rounds[0]?.cost.evaluator_calls ?? 0;
    rounds = Math.min(MAX_ROUNDS, roundsForCalls(size, seedSpent, shape, stochasticOf(o.dir)));
    if (finishedRounds(spend) < rounds) await run(rounds);
  } else {
    // Each decision rests on the rounds finished before it, so a resumed cell takes the same decisions again.
    rounds = finishedRounds(spend);
    const costs = () => spend.rounds.filter((r) => r.round > 0).map((r) => r.cost);
    while (anotherRound(unit, size, spend.cost[unit], costs())) {
      rounds++;
      await run(rounds);
      spend = readSpend(o.dir, unit, o.direction);
    }
  }
  // The run's best/ is written when optimize finishes: a resumed cell whose rounds were all done before it was
  // stopped finishes the run once more (no round runs) so best/ is the final choice's.
  if (last !== rounds) await run(rounds);
  return { spend: readSpend(o.dir, unit, o.direction), rounds };
}
