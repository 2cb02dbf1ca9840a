import { scoreNqOpen } from "../alias-scorers.ts";
import type { BenchmarkDef } from "../benchmark.ts";
import { goldList } from "../benchmark.ts";
import { wrongShortAnswer } from "../context.ts";
import { answerList, field, readJsonl } from "../readers.ts";

const COMMIT = "fb26a3073b1fe636c97302890a27b491d6530130";
const NAME = "NQ-open.dev.jsonl";

/** Natural Questions open, original dev split (Lee et al. 2019), scored by ORQA's evaluation: EM over the answers. */
export const nqOpen: BenchmarkDef = {
  id: "nq-open",
  title: "Natural Questions open (dev)",
  licence: "CC BY-SA 3.0",
  homepage: "https://github.com/google-research-datasets/natural-questions/tree/master/nq_open",
  files: [
    {
      name: NAME,
      url: `https://raw.githubusercontent.com/google-research-datasets/natural-questions/${COMMIT}/nq_open/${NAME}`,
      sha256: "f15567f38099f3615f5b8a685c0aef449c11ad90d3da3735e8d1b98115b40616",
      bytes: 391316,
    },
  ],
  sizes: { test: 3610 },
  load: (dir) => ({
    test: readJsonl(`${dir}/${NAME}`).map((r, i) => {
      const where = `${NAME}:${i + 1}`;
      return { id: `nq-open-dev-${i}`, question: field(r, "question", where), gold: answerList(r.answer, where, "answer") };
    }),
  }),
  scorer: {
    metrics: ["exact_match"],
    score: "exact_match",
    apply: (response, gold) => scoreNqOpen(response, goldList("nq-open", gold)),
    extract: (response) => response,
  },
  answerFormat: "a short answer",
  oracleAnswer: (gold) => goldList("nq-open", gold)[0] as string,
  wrongAnswer: (gold) => wrongShortAnswer(goldList("nq-open", gold)),
};
