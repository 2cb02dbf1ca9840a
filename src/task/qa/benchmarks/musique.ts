import { scoreMusique } from "../alias-scorers.ts";
import type { BenchmarkDef } from "../benchmark.ts";
import { goldList } from "../benchmark.ts";
import { withPassages, wrongShortAnswer } from "../context.ts";
import { field, readJsonl } from "../readers.ts";

const NAME = "musique_ans_v1.0_dev.jsonl";

/** MuSiQue-Answerable, dev (Trivedi et al. 2022), scored by evaluate_v1.0.py's answer EM and F1 over the aliases. */
export const musique: BenchmarkDef = {
  id: "musique",
  title: "MuSiQue-Ans (dev)",
  licence: "CC BY 4.0",
  homepage: "https://github.com/StonyBrookNLP/musique",
  // Published as a Google Drive archive (musique_v1.0.zip); its sha256 could not be checked from here.
  files: [
    { name: NAME, url: "https://drive.google.com/file/d/1tGdADlNjWFaHLeZZGShh2IRcpO6Lv24h#data/musique_ans_v1.0_dev.jsonl" },
  ],
  sizes: { test: 2417 },
  load: (dir) => ({
    test: readJsonl(`${dir}/${NAME}`).map((r, i) => {
      const where = `${NAME}:${i + 1}`;
      const paragraphs = Array.isArray(r.paragraphs) ? (r.paragraphs as { title?: unknown; paragraph_text?: unknown }[]) : [];
      const passages = paragraphs.map((p) => ({ title: String(p.title ?? ""), text: String(p.paragraph_text ?? "") }));
      const aliases = Array.isArray(r.answer_aliases) ? r.answer_aliases.map(String) : [];
      return {
        id: field(r, "id", where),
        question: withPassages(field(r, "question", where), passages),
        gold: [field(r, "answer", where), ...aliases],
      };
    }),
  }),
  scorer: {
    metrics: ["answer_em", "answer_f1"],
    score: "answer_f1",
    apply: (response, gold) => scoreMusique(response, goldList("musique", gold)),
    extract: (response) => response,
  },
  answerFormat: "a short answer",
  oracleAnswer: (gold) => goldList("musique", gold)[0] as string,
  wrongAnswer: (gold) => wrongShortAnswer(goldList("musique", gold)),
};
