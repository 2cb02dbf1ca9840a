import { HoneError } from "../../errors.ts";
import { scoreGsm8k, strictMatchFilter } from "./gsm8k.ts";
import { boxedAnswer, scoreHendrycksMath } from "./hendrycks-math.ts";
import { scoreHotpot } from "./hotpot.ts";
import { gradeAnswerWithoutSympy } from "./prm800k.ts";

/** What a benchmark's gold answer is: the dataset's own field (text, or a list of accepted aliases). */
export type Gold = string | readonly string[];

/** A benchmark's official scorer: its metrics by their published names, the one that decides "correct". */
export interface OfficialScorer {
  /** Metric names, in the order the benchmark's authors report them. */
  metrics: readonly string[];
  /** The 0/1 metric behind `correct` and accuracy. */
  primary: string;
  /** The metric a task's `score` carries (the primary one unless the benchmark reports a graded one, like F1). */
  score: string;
  apply(response: string, gold: Gold): Record<string, number>;
  /** The answer the primary metric reads from a response (for display only). */
  extract(response: string): string | undefined;
}

export function goldText(benchmark: string, gold: Gold): string {
  if (typeof gold === "string") return gold;
  throw new HoneError("usage", `${benchmark}: the gold answer is one string (the dataset's answer field), not a list`);
}

const SCORERS: Record<string, OfficialScorer> = {
  gsm8k: {
    metrics: ["strict-match", "flexible-extract"],
    primary: "strict-match",
    score: "strict-match",
    apply: (response, gold) => scoreGsm8k(response, goldText("gsm8k", gold)),
    extract: strictMatchFilter,
  },
  math500: {
    metrics: ["exact_match", "prm800k-nosympy"],
    primary: "exact_match",
    score: "exact_match",
    apply: (response, gold) => {
      const g = goldText("math500", gold);
      return {
        exact_match: scoreHendrycksMath(response, g),
        "prm800k-nosympy": gradeAnswerWithoutSympy(boxedAnswer(response), g) ? 1 : 0,
      };
    },
    extract: boxedAnswer,
  },
  hotpotqa: {
    metrics: ["em", "f1"],
    primary: "em",
    score: "f1",
    apply: (response, gold) => scoreHotpot(response, goldText("hotpotqa", gold)),
    extract: (response) => response,
  },
};

export function officialScorer(benchmark: string): OfficialScorer {
  const s = SCORERS[benchmark];
  if (!s) throw new HoneError("usage", `no official scorer for "${benchmark}"; hone scores ${Object.keys(SCORERS).join(", ")}`);
  return s;
}

/**
 * The benchmark's official metrics for one response, as numbers by their published names: `gsm8k` →
 * strict-match and flexible-extract (lm-evaluation-harness), `math500` → exact_match (Hendrycks' is_equiv) and
 * prm800k-nosympy (PRM800K's grader without its sympy stage), `hotpotqa` → em and f1 (hotpot_evaluate_v1.py).
 * `gold` is the dataset's own answer field (for GSM8K the whole answer text with its "#### n" line).
 */
export function scoreAnswer(benchmark: string, response: string, gold: Gold): Record<string, number> {
  if (typeof response !== "string") throw new HoneError("usage", "scoreAnswer: the response is a string");
  return officialScorer(benchmark).apply(response, gold);
}
