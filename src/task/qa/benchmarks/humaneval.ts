import { resolve } from "node:path";
import type { BenchmarkDef, Gold } from "../benchmark.ts";
import { executionScorer } from "../code/code-scorer.ts";
import { field, readJsonl } from "../readers.ts";

const COMMIT = "6d43fb980f9fee3c892a914eda09951f772ad10d";
const NAME = "HumanEval.jsonl.gz";

interface HumanEvalGold {
  prompt: string;
  test: string;
  entry_point: string;
  canonical_solution: string;
  /** The data folder, hidden from the completion where bubblewrap is missing. */
  data?: string;
}

function humanEvalGold(gold: Gold): HumanEvalGold {
  const g = gold as Partial<HumanEvalGold> | null;
  if (!g || typeof g !== "object" || ![g.prompt, g.test, g.entry_point, g.canonical_solution].every((s) => typeof s === "string"))
    throw new Error("humaneval: the gold is {prompt, test, entry_point, canonical_solution}");
  return g as HumanEvalGold;
}

/**
 * HumanEval (Chen et al. 2021), scored as openai/human-eval's check_correctness: the program is prompt + completion,
 * and it passes when `check(entry_point)` of the problem's test raises nothing within 3 s. Here the tests run in a
 * trusted checker and the completion in a contained process of its own (code/README.md).
 */
export const humaneval: BenchmarkDef = {
  id: "humaneval",
  title: "HumanEval (hand-written Python programming problems)",
  licence: "MIT",
  homepage: "https://github.com/openai/human-eval",
  files: [
    {
      name: NAME,
      url: `https://raw.githubusercontent.com/openai/human-eval/${COMMIT}/data/${NAME}`,
      sha256: "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef",
      bytes: 44877,
    },
  ],
  sizes: { test: 164 },
  load: (dir) => ({
    test: readJsonl(`${dir}/${NAME}`).map((r, i) => {
      const where = `${NAME}:${i + 1}`;
      const gold = {
        prompt: field(r, "prompt", where),
        test: field(r, "test", where),
        entry_point: field(r, "entry_point", where),
        canonical_solution: field(r, "canonical_solution", where),
        data: resolve(dir),
      };
      return { id: field(r, "task_id", where), question: gold.prompt, gold };
    }),
  }),
  scorer: executionScorer((completion, gold) => {
    const g = humanEvalGold(gold as Gold);
    return {
      program: g.prompt + completion,
      setup: g.prompt,
      tests: g.test,
      entries: [g.entry_point],
      after: `check(${g.entry_point})`,
      timeoutSec: 3,
      hide: g.data ? [g.data] : [],
    };
  }),
  answerFormat:
    "Python code that completes the function above: its body, indented, continuing the prompt (or the whole function with the imports it needs)",
  oracleAnswer: (gold) => humanEvalGold(gold).canonical_solution,
  wrongAnswer: () => "    return None\n",
};
