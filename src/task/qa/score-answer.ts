import { HoneError } from "../../errors.ts";
import type { Gold, OfficialScorer } from "./benchmark.ts";
import { BENCHMARKS } from "./benchmarks.ts";

export type { Gold, OfficialScorer } from "./benchmark.ts";

export function officialScorer(benchmark: string): OfficialScorer {
  const b = BENCHMARKS[benchmark];
  if (!b)
    throw new HoneError("usage", `no official scorer for "${benchmark}"; hone scores ${Object.keys(BENCHMARKS).join(", ")}`);
  return b.scorer;
}

/** The metric behind `correct` and accuracy: the first the benchmark reports. */
export const primaryMetric = (s: OfficialScorer): string => s.metrics[0] as string;

/**
 * The benchmark's official metrics for one response, as numbers by their published names (`hone datasets` lists
 * them): e.g. `gsm8k` → strict-match and flexible-extract (lm-evaluation-harness), `math500` → exact_match
 * (Hendrycks' is_equiv) and prm800k-nosympy, `hotpotqa` → em and f1 (hotpot_evaluate_v1.py). `gold` is the
 * dataset's own answer field: GSM8K's whole answer text, a list of aliases for TriviaQA, NQ, MuSiQue and 2Wiki, a
 * boolean for StrategyQA, `{functions, ground_truth}` as JSON text for BFCL.
 */
export function scoreAnswer(benchmark: string, response: string, gold: Gold): Record<string, number> {
  if (typeof response !== "string") throw new HoneError("usage", "scoreAnswer: the response is a string");
  const scorer = officialScorer(benchmark);
  try {
    return scorer.apply(response, gold);
  } catch (err) {
    throw new HoneError("usage", `scoreAnswer(${benchmark}): ${(err as Error).message}`);
  }
}
