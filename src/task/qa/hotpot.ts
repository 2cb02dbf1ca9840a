import { PY_WORD_CLASS, pySplit } from "./python-text.ts";

/**
 * HotpotQA's answer metrics as hotpot_evaluate_v1.py computes them (hotpotqa/hotpot), with Python 3's semantics:
 * `str.lower`, `string.punctuation` (ASCII), `re.sub(r'\b(a|an|the)\b', ' ', …)` where `\b` is Unicode-aware (so
 * the "a" of "Peña" is a word's letter, not an article), and `str.split()` on Unicode whitespace. The same rules
 * are SQuAD's answer normalisation, reused by other QA sets.
 */

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;
const ARTICLES = new RegExp(`(?<![${PY_WORD_CLASS}])(?:a|an|the)(?![${PY_WORD_CLASS}])`, "gu");

/** `normalize_answer`: lower, remove punctuation, remove articles, collapse whitespace. */
export function normalizeAnswer(s: string): string {
  return pySplit(s.toLowerCase().replace(PUNCTUATION, "").replace(ARTICLES, " ")).join(" ");
}

export function exactMatchScore(prediction: string, gold: string): 0 | 1 {
  return normalizeAnswer(prediction) === normalizeAnswer(gold) ? 1 : 0;
}

/** Token F1 over normalised tokens (bag intersection); SQuAD's rule, without HotpotQA's yes/no/noanswer guard. */
export function tokenF1(predictionTokens: string[], goldTokens: string[]): number {
  const counts = new Map<string, number>();
  for (const t of goldTokens) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of predictionTokens) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same++;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = (1.0 * same) / predictionTokens.length;
  const recall = (1.0 * same) / goldTokens.length;
  return (2 * precision * recall) / (precision + recall);
}

const SPECIAL = ["yes", "no", "noanswer"];

/** `f1_score`: 0 when either side normalises to yes/no/noanswer and they differ, else token F1. */
export function hotpotF1(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  if ((SPECIAL.includes(p) || SPECIAL.includes(g)) && p !== g) return 0;
  return tokenF1(p.split(" ").filter(Boolean), g.split(" ").filter(Boolean));
}

export function scoreHotpot(response: string, gold: string): { em: 0 | 1; f1: number } {
  return { em: exactMatchScore(response, gold), f1: hotpotF1(response, gold) };
}
