/**
 * Greedy hill climbing, the simplest baseline (no upstream code: the rule is the definition, and the same ratchet
 * hone's HarnessTTT loop and `GreedyMonotonic` apply): one proposal per round from the incumbent, kept only when its
 * score is strictly better in the task's direction; an unscored (invalid, failed) candidate is never kept, and the
 * first scored candidate is kept when the incumbent has no score. The random baseline (random.ts) keeps by the same
 * rule.
 */
import type { Direction } from "../reward.ts";
import { strictlyBetter } from "./sample.ts";

export const GREEDY_PROPOSALS = 1;

const scored = (x: number | null | undefined): x is number => typeof x === "number" && Number.isFinite(x);

/** Whether the candidate replaces the incumbent. */
export function keepIfBetter(
  candidate: number | null | undefined,
  incumbent: number | null | undefined,
  direction: Direction,
): boolean {
  if (!scored(candidate)) return false;
  return !scored(incumbent) || strictlyBetter(candidate, incumbent, direction);
}

/** The index of the candidate a round keeps (the best strictly better one), or undefined when none beats the incumbent. */
export function bestImprovement(
  candidates: readonly (number | null | undefined)[],
  incumbent: number | null | undefined,
  direction: Direction,
): number | undefined {
  let best: number | undefined;
  candidates.forEach((c, i) => {
    if (keepIfBetter(c, best === undefined ? incumbent : (candidates[best] as number), direction)) best = i;
  });
  return best;
}
