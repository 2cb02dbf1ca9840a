import { isEquiv, lastBoxedOnlyString, removeBoxed } from "./hendrycks-math.ts";

/**
 * Benchmarks whose published metric is plain accuracy on a closed answer. StrategyQA has no official answer
 * parser: hone's reading of a response is written here and documented, and nothing else is lenient. AIME is
 * scored as lm-evaluation-harness's aime tasks score it.
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
 * AIME as lm-evaluation-harness scores it (lm_eval/tasks/aime/utils.py `process_results`, behind its aime24 task on
 * the same Maxwell-Jia/AIME_2024 dataset and aime25): the answer is the text between the response's first and last
 * "$" (the whole response with fewer than two), replaced by the inside of its last `\boxed{…}` or `\boxed …` where
 * that reads; `is_equiv` (Hendrycks' `strip_string`, lm-eval's copy) against `str()` of the gold. So "$33$" and
 * "k = 33" are right for 33, and "033" and "33.0" are wrong.
 */
export function aimeAnswer(response: string): string | undefined {
  let answer = response;
  const first = response.indexOf("$");
  const last = response.lastIndexOf("$");
  if (first >= 0 && last > first) answer = response.slice(first + 1, last);
  const boxed = aimeRemoveBoxed(aimeLastBoxed(response));
  return boxed ?? answer;
}

/** lm-eval aime's `last_boxed_only_string`: a "\boxed " anywhere wins (its text up to a "$"), else Hendrycks'. */
function aimeLastBoxed(s: string): string | undefined {
  const spaced = "\\boxed ";
  if (s.includes(spaced)) return spaced + (s.split(spaced).at(-1) as string).split("$")[0];
  return lastBoxedOnlyString(s);
}

/** lm-eval aime's `remove_boxed`, undefined where it raises AssertionError (the caller keeps its answer). */
function aimeRemoveBoxed(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  const spaced = "\\boxed ";
  if (s.includes(spaced)) return s.startsWith(spaced) ? s.slice(spaced.length) : undefined;
  return removeBoxed(s);
}

export const scoreAime = (response: string, gold: string): { exact_match: number } => ({
  exact_match: isEquiv(aimeAnswer(response), gold, true) ? 1 : 0,
});
