import type { BenchmarkDef } from "../benchmark.ts";
import { goldText } from "../benchmark.ts";
import { flexibleExtractFilter, gsm8kFinalAnswer, scoreGsm8k, strictMatchFilter } from "../gsm8k.ts";
import { field, readJsonl } from "../readers.ts";

const COMMIT = "3101c7d5072418e28b9008a6636bde82a006892c";
const url = (name: string) =>
  `https://raw.githubusercontent.com/openai/grade-school-math/${COMMIT}/grade_school_math/data/${name}`;

/** GSM8K (Cobbe et al. 2021), scored as lm-evaluation-harness's gsm8k task. Gold: the whole answer field. */
export const gsm8k: BenchmarkDef = {
  id: "gsm8k",
  title: "GSM8K grade-school math",
  licence: "MIT",
  homepage: "https://github.com/openai/grade-school-math",
  files: [
    { name: "train.jsonl", url: url("train.jsonl"), sha256: "17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465" },
    { name: "test.jsonl", url: url("test.jsonl"), sha256: "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14" },
  ],
  sizes: { train: 7473, test: 1319 },
  load: (dir) =>
    Object.fromEntries(
      (["train", "test"] as const).map((split) => [
        split,
        readJsonl(`${dir}/${split}.jsonl`).map((r, i) => {
          const where = `${split}.jsonl:${i + 1}`;
          return { id: `gsm8k-${split}-${i}`, question: field(r, "question", where), gold: field(r, "answer", where) };
        }),
      ]),
    ),
  scorer: {
    metrics: ["strict-match", "flexible-extract"],
    score: "strict-match",
    apply: (response, gold) => scoreGsm8k(response, goldText("gsm8k", gold)),
    extract: (response) => {
      const s = strictMatchFilter(response);
      return s === "[invalid]" ? flexibleExtractFilter(response) : s;
    },
  },
  answerFormat: "#### <number>",
  oracleAnswer: (gold) => `#### ${gsm8kFinalAnswer(goldText("gsm8k", gold))}`,
  wrongAnswer: (gold) => `#### ${offByOne(gsm8kFinalAnswer(goldText("gsm8k", gold)))}`,
};

/** A plausible wrong number: the gold plus one (its digits only, so no format quirk makes it right). */
export function offByOne(n: string): string {
  const v = Number(n.replace(/[,$]/g, ""));
  return Number.isFinite(v) ? String(v + 1) : `${n}1`;
}
