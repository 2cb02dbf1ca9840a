import type { BenchmarkDef } from "../benchmark.ts";
import { readBoolean, scoreStrategyQA } from "../exact-answers.ts";
import { field, readJsonArray } from "../readers.ts";

const NAME = "strategyqa_train.json";

const goldBool = (gold: unknown): boolean => {
  if (typeof gold !== "boolean") throw new Error("strategyqa: the gold answer is a boolean");
  return gold;
};

/**
 * StrategyQA (Geva et al. 2021): yes/no questions that need implicit multi-step reasoning, scored as accuracy.
 * Only the train file has answers (the test set is scored by its leaderboard), so `train` and `validation` are
 * divided from it by seed and there is no `test` split.
 */
export const strategyqa: BenchmarkDef = {
  id: "strategyqa",
  title: "StrategyQA (train, divided by seed)",
  licence: "see the homepage (the code repository is MIT)",
  homepage: "https://allenai.org/data/strategyqa",
  // Published in strategyqa_dataset.zip by AI2; its sha256 could not be checked from here.
  files: [
    { name: NAME, url: "https://storage.googleapis.com/ai2i/strategyqa/data/strategyqa_dataset.zip#strategyqa_train.json" },
  ],
  sizes: { train: 2290 },
  load: (dir) => ({
    train: readJsonArray(`${dir}/${NAME}`).map((r, i) => {
      const where = `${NAME}[${i}]`;
      if (typeof r.answer !== "boolean") throw new Error(`${where}: field "answer" is not a boolean`);
      return { id: field(r, "qid", where), question: field(r, "question", where), gold: r.answer };
    }),
  }),
  scorer: {
    metrics: ["accuracy"],
    score: "accuracy",
    apply: (response, gold) => scoreStrategyQA(response, goldBool(gold)),
    extract: (response) => {
      const b = readBoolean(response);
      return b === undefined ? undefined : b ? "yes" : "no";
    },
  },
  answerFormat: "yes or no",
  oracleAnswer: (gold) => (goldBool(gold) ? "yes" : "no"),
  wrongAnswer: (gold) => (goldBool(gold) ? "no" : "yes"),
};
