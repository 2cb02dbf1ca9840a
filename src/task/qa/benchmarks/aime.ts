import type { BenchmarkDef, DatasetFile, QATask } from "../benchmark.ts";
import { goldText } from "../benchmark.ts";
import { aimeAnswer, scoreAime } from "../exact-answers.ts";

/** What AIME 2024 and 2025 share: integer answers, exact match, the answer boxed. */
export function aimeBenchmark(o: {
  id: string;
  year: number;
  homepage: string;
  files: DatasetFile[];
  load: (dir: string) => QATask[] | Promise<QATask[]>;
}): BenchmarkDef {
  return {
    id: o.id,
    title: `AIME ${o.year} (American Invitational Mathematics Examination, I and II)`,
    licence: "problems © MAA; see the dataset card",
    homepage: o.homepage,
    files: o.files,
    sizes: { test: 30 },
    load: async (dir) => ({ test: await o.load(dir) }),
    scorer: {
      metrics: ["exact_match"],
      score: "exact_match",
      apply: (response, gold) => scoreAime(response, goldText(o.id, gold)),
      extract: aimeAnswer,
    },
    answerFormat: "\\boxed{<integer from 0 to 999>}",
    oracleAnswer: (gold) => `\\boxed{${goldText(o.id, gold).trim()}}`,
    wrongAnswer: (gold) => `\\boxed{${(Number(goldText(o.id, gold)) + 1) % 1000}}`,
  };
}
