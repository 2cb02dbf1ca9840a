import { lastBoxedOnlyString, removeBoxed } from "./hendrycks-math.ts";

/**
 * Benchmarks whose published metric is plain accuracy on a closed answer, with no official answer parser:
 * hone's reading of a response is written here and documented, and nothing else is lenient.
 */

/**
 * StrategyQA (Geva et al. 2021) is scored as accuracy on its boolean answer. The response is read as a boolean
 * when, lower-cased and without surrounding spaces and a final full stop, it is "yes"/"true" or "no"/"false";
 * anything else is wrong.
 */
export function readBoolean(response: string): boolean | undefined {
  const t = response.trim().replace(/\.$/, "").trim().toLowerCase();
  if (t === "yes" || t === "true") return true;
  if (t === "no" || t === "false") return false;
  return undefined;
}

export const scoreStrategyQA = (response: string, gold: boolean): { accuracy: number } => ({
  accuracy: readBoolean(response) === gold ? 1 : 0,
});

/**
 * AIME answers are integers from 0 to 999. The response's answer is its last \boxed{…} if it has one, else the
 * whole response; it counts when it is an integer (leading zeros allowed, as in "033") equal to the gold.
 */
export function aimeAnswer(response: string): string | undefined {
  const boxed = removeBoxed(lastBoxedOnlyString(response));
  const t = (boxed ?? response).trim();
  return /^\d{1,6}$/.test(t) ? String(Number(t)) : undefined;
}

export const scoreAime = (response: string, gold: string): { exact_match: number } => ({
  exact_match: aimeAnswer(response) === String(Number(gold.trim())) ? 1 : 0,
});
