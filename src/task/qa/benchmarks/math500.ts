import type { BenchmarkDef } from "../benchmark.ts";
import { goldText } from "../benchmark.ts";
import { boxedAnswer, scoreHendrycksMath } from "../hendrycks-math.ts";
import { gradeAnswerWithoutSympy } from "../prm800k.ts";
import { field, readJsonl } from "../readers.ts";

const COMMIT = "7ecc794703b2877f63226f2477a49b34f9b25163";

/** MATH-500 (PRM800K's test split of Hendrycks' MATH), scored by Hendrycks' is_equiv and PRM800K's grader. */
export const math500: BenchmarkDef = {
  id: "math500",
  title: "MATH-500 (Hendrycks MATH, PRM800K split)",
  licence: "MIT",
  homepage: "https://github.com/openai/prm800k",
  files: [
    {
      name: "test.jsonl",
      // A Git LFS file: the media URL serves its content, whose sha256 is the LFS object id.
      url: `https://media.githubusercontent.com/media/openai/prm800k/${COMMIT}/prm800k/math_splits/test.jsonl`,
      sha256: "35dc41080a3680858b27fa7e0533d2d547825316fc5dafe5d316f4ccc5a06132",
      bytes: 446564,
    },
  ],
  sizes: { test: 500 },
  load: (dir) => ({
    test: readJsonl(`${dir}/test.jsonl`).map((r, i) => {
      const where = `test.jsonl:${i + 1}`;
      return { id: field(r, "unique_id", where), question: field(r, "problem", where), gold: field(r, "answer", where) };
    }),
  }),
  scorer: {
    metrics: ["exact_match", "prm800k-nosympy"],
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
  answerFormat: "\\boxed{<answer>}",
  oracleAnswer: (gold) => `\\boxed{${goldText("math500", gold)}}`,
  // The gold plus one: an integer for an integer gold, else "1+" before the expression (a suffix could be cut
  // off with trailing units by _strip_string).
  wrongAnswer: (gold) => {
    const g = goldText("math500", gold);
    return `\\boxed{${/^-?\d+$/.test(g) ? String(Number(g) + 1) : `1+${g}`}}`;
  },
};
