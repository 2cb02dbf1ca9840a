import { exactMatchScore, hotpotF1, normalizeAnswer, tokenF1 } from "./hotpot.ts";
import { PY_WORD_CLASS, pySplit, pyStrip } from "./python-text.ts";

/**
 * Answer metrics over a list of accepted answers, each as its benchmark's official script computes it (with
 * Python 3's string semantics, see python-text.ts):
 * - TriviaQA (mandarjoshi90/triviaqa evaluation/triviaqa_evaluation.py): its own normalisation (underscores and
 *   punctuation, with ‘ ’ ´ `, become spaces), EM and F1 as the maximum over the ground truths;
 * - Natural Questions open (google-research/language orqa/utils/eval_utils.py): NFD, then SQuAD's normalisation,
 *   EM as the maximum over the answers;
 * - MuSiQue (StonyBrookNLP/musique metrics/answer.py): SQuAD's compute_exact and compute_f1 (an empty side
 *   scores 1 only when both are empty), maximum over the answer and its aliases;
 * - 2WikiMultihopQA (Alab-NII/2wikimultihop 2wikimultihop_evaluate_v1.1.py): HotpotQA's EM and F1 (with its
 *   yes/no/noanswer rule), maximum over the answer and its aliases.
 */

const max = (xs: number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

const TRIVIA_PUNCT = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~‘’´]/g;
const ARTICLES = new RegExp(`(?<![${PY_WORD_CLASS}])(?:a|an|the)(?![${PY_WORD_CLASS}])`, "gu");

export function triviaqaNormalize(s: string): string {
  const t = s.split("_").join(" ").toLowerCase().replace(TRIVIA_PUNCT, " ").replace(ARTICLES, " ");
  return pyStrip(pySplit(t).join(" "));
}

export function scoreTriviaqa(prediction: string, groundTruths: string[]): { exact_match: number; f1: number } {
  const p = triviaqaNormalize(prediction);
  const pt = pySplit(p);
  return {
    exact_match: max(groundTruths.map((g) => (p === triviaqaNormalize(g) ? 1 : 0))),
    f1: max(groundTruths.map((g) => tokenF1(pt, pySplit(triviaqaNormalize(g))))),
  };
}

export const nqNormalize = (s: string): string => normalizeAnswer(s.normalize("NFD"));

export function scoreNqOpen(prediction: string, answers: string[]): { exact_match: number } {
  const p = nqNormalize(prediction);
  return { exact_match: answers.some((a) => nqNormalize(a) === p) ? 1 : 0 };
}

/** SQuAD's get_tokens: nothing for an empty string, else the normalised tokens. */
const squadTokens = (s: string) => (s ? pySplit(normalizeAnswer(s)) : []);

function squadF1(a: string, b: string): number {
  const at = squadTokens(a);
  const bt = squadTokens(b);
  if (at.length === 0 || bt.length === 0) return at.length === bt.length ? 1 : 0;
  return tokenF1(bt, at);
}

export function scoreMusique(prediction: string, answers: string[]): { answer_em: number; answer_f1: number } {
  return {
    answer_em: max(answers.map((a) => exactMatchScore(prediction, a))),
    answer_f1: max(answers.map((a) => squadF1(prediction, a))),
  };
}

export function score2Wiki(prediction: string, answers: string[]): { em: number; f1: number } {
  return {
    em: max(answers.map((a) => exactMatchScore(prediction, a))),
    f1: max(answers.map((a) => hotpotF1(prediction, a))),
  };
}
