import { existsSync } from "node:fs";
import { score2Wiki } from "../alias-scorers.ts";
import type { BenchmarkDef } from "../benchmark.ts";
import { goldList } from "../benchmark.ts";
import { withPassages, wrongShortAnswer } from "../context.ts";
import { field, readJsonArray, readJsonl } from "../readers.ts";

const DEV = "dev.json";
const ALIASES = "id_aliases.json";

/** The evaluation script's aliases: answer_id → aliases and demonyms (id_aliases.json, one object a line). */
function aliasTable(dir: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!existsSync(`${dir}/${ALIASES}`)) return out;
  for (const r of readJsonl(`${dir}/${ALIASES}`)) {
    const list = [r.aliases, r.demonyms].flatMap((x) => (Array.isArray(x) ? x.map(String) : []));
    out.set(String(r.Q_id), list);
  }
  return out;
}

/** 2WikiMultihopQA, dev (Ho et al. 2020), scored by 2wikimultihop_evaluate_v1.1.py: EM and F1 over answer and aliases. */
export const twoWiki: BenchmarkDef = {
  id: "2wikimultihopqa",
  title: "2WikiMultihopQA (dev)",
  licence: "Apache-2.0 (the repository)",
  homepage: "https://github.com/Alab-NII/2wikimultihop",
  // Published as a Dropbox archive (data_ids_april7.zip); sha256 could not be checked from here.
  files: [
    { name: DEV, url: "https://www.dropbox.com/s/npidmtadreo6df2/data.zip#dev.json" },
    { name: ALIASES, url: "https://www.dropbox.com/s/npidmtadreo6df2/data.zip#id_aliases.json" },
  ],
  sizes: { test: 12576 },
  load: (dir) => {
    const aliases = aliasTable(dir);
    return {
      test: readJsonArray(`${dir}/${DEV}`).map((r, i) => {
        const where = `${DEV}[${i}]`;
        const context = Array.isArray(r.context) ? (r.context as [string, string[]][]) : [];
        const passages = context.map(([title, sentences]) => ({ title: String(title), text: (sentences ?? []).join(" ") }));
        const answer = field(r, "answer", where);
        const extra = (aliases.get(String(r.answer_id)) ?? []).filter((a) => a !== answer);
        return {
          id: field(r, "_id", where),
          question: withPassages(field(r, "question", where), passages),
          gold: [answer, ...extra],
        };
      }),
    };
  },
  scorer: {
    metrics: ["em", "f1"],
    score: "f1",
    apply: (response, gold) => score2Wiki(response, goldList("2wikimultihopqa", gold)),
    extract: (response) => response,
  },
  answerFormat: "a short answer (a name, a date, or yes/no)",
  oracleAnswer: (gold) => goldList("2wikimultihopqa", gold)[0] as string,
  wrongAnswer: (gold) => {
    const g = goldList("2wikimultihopqa", gold);
    return g[0] === "yes" ? "no" : g[0] === "no" ? "yes" : wrongShortAnswer(g);
  },
};
