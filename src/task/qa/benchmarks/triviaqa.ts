import { scoreTriviaqa } from "../alias-scorers.ts";
import type { BenchmarkDef } from "../benchmark.ts";
import { goldList } from "../benchmark.ts";
import { wrongShortAnswer } from "../context.ts";
import { answerList, field, readJsonArray } from "../readers.ts";

const NAME = "wikipedia-dev.json";

/**
 * TriviaQA, Wikipedia domain, dev questions without their documents (Joshi et al. 2017), scored by
 * triviaqa_evaluation.py over the answer's normalised aliases and human answers.
 */
export const triviaqa: BenchmarkDef = {
  id: "triviaqa",
  title: "TriviaQA (Wikipedia, dev, no context)",
  licence: "see the homepage (the code repository is Apache-2.0)",
  homepage: "https://nlp.cs.washington.edu/triviaqa/",
  // qa/wikipedia-dev.json inside the 2.5 GB release archive; its sha256 could not be checked from here.
  files: [{ name: NAME, url: "https://nlp.cs.washington.edu/triviaqa/data/triviaqa-rc.tar.gz#qa/wikipedia-dev.json" }],
  sizes: { test: 7993 },
  load: (dir) => ({
    test: readJsonArray(`${dir}/${NAME}`, "Data").map((r, i) => {
      const where = `${NAME} Data[${i}]`;
      const answer = (r.Answer ?? {}) as { NormalizedAliases?: unknown; HumanAnswers?: unknown };
      const aliases = [answer.NormalizedAliases, answer.HumanAnswers ?? []].flatMap((x) => (Array.isArray(x) ? x : []));
      const gold = answerList(aliases, where, "Answer.NormalizedAliases");
      return { id: field(r, "QuestionId", where), question: field(r, "Question", where), gold };
    }),
  }),
  scorer: {
    metrics: ["exact_match", "f1"],
    score: "exact_match",
    apply: (response, gold) => scoreTriviaqa(response, goldList("triviaqa", gold)),
    extract: (response) => response,
  },
  answerFormat: "a short answer",
  oracleAnswer: (gold) => goldList("triviaqa", gold)[0] as string,
  wrongAnswer: (gold) => wrongShortAnswer(goldList("triviaqa", gold)),
};
