import { resolve } from "node:path";
import type { BenchmarkDef, Gold, QATask, Split } from "../benchmark.ts";
import { executionScorer } from "../code/code-scorer.ts";
import { readJsonArray } from "../readers.ts";

// The commit of google-research holding the sanitized file as hone read it; its sha256 could not be checked from
// where hone was built, so `hone datasets fetch mbpp --record` pins what it gets.
const COMMIT = "30adf0ec5f35f9609c2f1d896005e184195d9146";
const NAME = "sanitized-mbpp.json";

interface MbppGold {
  code: string;
  test_imports: string[];
  test_list: string[];
  /** The data folder, hidden from the completion where bubblewrap is missing. */
  data?: string;
}

function mbppGold(gold: Gold): MbppGold {
  const g = gold as Partial<MbppGold> | null;
  const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === "string");
  if (!g || typeof g !== "object" || typeof g.code !== "string" || !strings(g.test_imports) || !strings(g.test_list))
    throw new Error("mbpp: the gold is {code, test_imports, test_list}");
  return g as MbppGold;
}

/** The functions under test: the gold code's top-level definitions that the tests call. */
export function mbppEntries(code: string, tests: string[]): string[] {
  const defined = [...code.matchAll(/^def\s+([A-Za-z_]\w*)\s*\(/gm)].map((m) => m[1] as string);
  const text = tests.join("\n");
  const called = defined.filter((name) => new RegExp(`\\b${name}\\s*\\(`).test(text));
  return called.length ? called : defined;
}

/** MBPP's task-id ranges (its README): 1-10 few-shot prompts, 11-510 test, 511-600 validation, 601-974 train. */
function splitOf(taskId: number): Split | undefined {
  if (taskId >= 11 && taskId <= 510) return "test";
  if (taskId >= 511 && taskId <= 600) return "validation";
  if (taskId >= 601) return "train";
  return undefined;
}

/** The prompt of the MBPP paper and lm-evaluation-harness: the task and its tests (they name the function). */
const question = (prompt: string, tests: string[]) => `${prompt}\nYour code should pass these tests:\n\n${tests.join("\n")}`;

/**
 * MBPP, the sanitized split (Austin et al. 2021): a program passes when every assertion of its test list holds, after
 * the test imports; the tests run in a trusted checker and the program in a contained process (code/README.md).
 */
export const mbpp: BenchmarkDef = {
  id: "mbpp",
  title: "MBPP sanitized (Mostly Basic Python Problems, hand-verified subset)",
  licence: "CC-BY-4.0",
  homepage: "https://github.com/google-research/google-research/tree/master/mbpp",
  files: [{ name: NAME, url: `https://raw.githubusercontent.com/google-research/google-research/${COMMIT}/mbpp/${NAME}` }],
  sizes: { train: 120, validation: 43, test: 257 },
  load: (dir) => {
    const out: Record<Split, QATask[]> = { train: [], validation: [], test: [] };
    readJsonArray(`${dir}/${NAME}`).forEach((r, i) => {
      const where = `${NAME} item ${i}`;
      const id = Number(r.task_id);
      const g = { code: r.code, test_imports: r.test_imports ?? [], test_list: r.test_list } as Partial<MbppGold>;
      if (!Number.isInteger(id) || typeof r.prompt !== "string") throw new Error(`${where}: task_id or prompt missing`);
      const gold = mbppGold(g as Gold);
      const split = splitOf(id);
      if (split)
        out[split].push({
          id: `mbpp-${id}`,
          question: question(r.prompt, gold.test_list),
          gold: { ...gold, data: resolve(dir) },
        });
    });
    return out;
  },
  scorer: executionScorer((completion, gold) => {
    const g = mbppGold(gold as Gold);
    return {
      program: completion,
      setup: g.test_imports.join("\n"),
      tests: g.test_list.join("\n"),
      entries: mbppEntries(g.code, g.test_list),
      timeoutSec: 3,
      hide: g.data ? [g.data] : [],
    };
  }),
  answerFormat: "Python code: the whole program, the function with the imports it needs",
  oracleAnswer: (gold) => mbppGold(gold).code,
  wrongAnswer: (gold) => {
    const g = mbppGold(gold);
    return mbppEntries(g.code, g.test_list)
      .map((name) => `def ${name}(*args, **kwargs):\n    return None\n`)
      .join("\n");
  },
};
