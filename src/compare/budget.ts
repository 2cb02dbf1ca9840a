// One budget for every cell: turned into rounds up front where the unit allows (evaluator calls), and otherwise
// checked after every round against what the records show was spent. Pure functions.
import type { CellCost } from "./cell.ts";
import type { BudgetUnit } from "./experiment.ts";

/** The shape of a cell's rounds: what bounds the evaluator calls a round can make. */
export interface RoundShape {
  proposals: number;
  maxEvals: number;
  noiseRepeats: number;
  paired: boolean;
}

/**
 * What a round's evaluator calls plan for, beyond its rollouts: `true`, a stochastic evaluator (every comparison
 * re-evaluates); `false`, a deterministic one (none); `"unconfirmed"`, one measured deterministic on the seed, whose
 * would-be winner is re-evaluated `noiseRepeats` times before a promotion (`confirmDeterministic`).
 */
export type PlannedNoise = boolean | "unconfirmed";

/**
 * The most evaluator calls one round of proposals can make: K rollouts of `maxEvals` (twice that with paired
 * controls) and, where the evaluator is stochastic, the comparison's re-evaluations (the incumbent's and each
 * rollout's best program, `noiseRepeats` each); where it is still to be confirmed, the winner's `noiseRepeats`.
 */
export function roundCalls(s: RoundShape, noise: PlannedNoise): number {
  const rollouts = s.proposals * (s.paired ? 2 : 1);
  const n = s.noiseRepeats >= 2 ? s.noiseRepeats : 0;
  const repeats = noise === true ? n * (1 + rollouts) : noise === "unconfirmed" ? n : 0;
  return rollouts * s.maxEvals + repeats;
}

/** The most evaluator calls the seed round can make: the seed program's repeats and the seed harness's rollout. */
export const seedRoundCalls = (s: RoundShape) => s.noiseRepeats + s.maxEvals;

/** How many rounds of proposals fit in `size` evaluator calls once the seed round has spent `seedSpent`. */
export function roundsForCalls(size: number, seedSpent: number, s: RoundShape, noise: PlannedNoise): number {
  const per = roundCalls(s, noise);
  return per <= 0 ? 0 : Math.max(0, Math.floor((size - seedSpent) / per));
}

/**
 * The rounds of proposals that fit once a confirmation in round `refutedIn` found a measured deterministic evaluator
 * stochastic: the rounds up to it (already run) and as many stochastic rounds as fit in what rounds 0–`refutedIn`
 * left (`spentThrough`). The round that refuted may itself have spent up to a stochastic round's calls where an
 * unconfirmed one was reserved (`noiseRepeats` more per rollout): the rounds after it absorb that where the budget
 * has them; where none is left, the cell ends that much past its budget.
 */
export const roundsAfterRefutation = (size: number, spentThrough: number, refutedIn: number, s: RoundShape) =>
  refutedIn + roundsForCalls(size, spentThrough, s, true);

/** The most rounds any cell runs, whatever its unit: a guard against a budget no round spends. */
export const MAX_ROUNDS = 1000;

/**
 * Where the unit cannot be planned (tokens, seconds): whether to run one more round, given what the finished rounds
 * spent. Another round runs while the budget is not spent and the costliest round so far (of proposals; none before
 * the first) would still fit. A round that spent nothing of the unit (random spends no proposer tokens) ends the
 * search: its rounds cannot be counted in that unit.
 */
export function anotherRound(unit: BudgetUnit, size: number, spent: number, rounds: readonly CellCost[]): boolean {
  if (rounds.length >= MAX_ROUNDS || spent >= size) return false;
  const last = rounds[rounds.length - 1];
  if (last && last[unit] <= 0) return false;
  const dearest = Math.max(0, ...rounds.map((c) => c[unit]));
  return spent + dearest <= size;
}

/**
 * A QA cell's evaluator calls that do not depend on its rounds (each question answered and scored is one call): the
 * seed harness on the train slice (round 0) and the final choice on the validation slice.
 */
export const qaFixedCalls = (train: number, validation: number) => train + validation;

/** How many QA rounds fit in `size` evaluator calls: each round measures up to K candidates on every train question. */
export function qaRoundsForCalls(size: number, train: number, validation: number, proposals: number): number {
  const per = proposals * train;
  if (per <= 0) return 0;
  return Math.max(0, Math.min(MAX_ROUNDS, Math.floor((size - qaFixedCalls(train, validation)) / per)));
}
