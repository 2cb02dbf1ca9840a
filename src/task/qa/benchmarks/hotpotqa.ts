import type { BenchmarkDef, QATask } from "../benchmark.ts";
import { goldText } from "../benchmark.ts";
import { withPassages, wrongShortAnswer } from "../context.ts";
import { scoreHotpot } from "../hotpot.ts";
import { field, type Row, readJsonArray } from "../readers.ts";

const NAME = "hotpot_dev_distractor_v1.json";

function task(r: Row, i: number): QATask {
  const where = `${NAME}[${i}]`;
  const context = Array.isArray(r.context) ? (r.context as [string, string[]][]) : [];
  const passages = context.map(([title, sentences]) => ({ title: String(title), text: (sentences ?? []).join("") }));
  return {
    id: field(r, "_id", where),
    question: withPassages(field(r, "question", where), passages),
    gold: field(r, "answer", where),
  };
}

/** HotpotQA, distractor setting, dev set (Yang et al. 2018), scored by hotpot_evaluate_v1.py's answer metrics. */
export const hotpotqa: BenchmarkDef = {
  id: "hotpotqa",
  title: "HotpotQA (distractor, dev)",
  licence: "CC BY-SA 4.0",
  homepage: "https://hotpotqa.github.io",
  // Served by CMU without a pinned release; its sha256 could not be checked when this benchmark was added.
  files: [{ name: NAME, url: `http://curtis.ml.cmu.edu/datasets/hotpot/${NAME}` }],
  sizes: { test: 7405 },
  load: (dir) => ({ test: readJsonArray(`${dir}/${NAME}`).map(task) }),
  scorer: {
    metrics: ["em", "f1"],
    score: "f1",
    apply: (response, gold) => scoreHotpot(response, goldText("hotpotqa", gold)),
    extract: (response) => response,
  },
  answerFormat: "a short answer (a name, a phrase, or yes/no)",
  oracleAnswer: (gold) => goldText("hotpotqa", gold),
  wrongAnswer: (gold) => {
    const g = goldText("hotpotqa", gold);
    return g === "yes" ? "no" : g === "no" ? "yes" : wrongShortAnswer([g]);
  },
};
