import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BENCHMARKS } from "../../src/task/qa/benchmarks.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

/** A data folder for one benchmark holding the given files (its published names). */
function folder(id: string, files: Record<string, string>): string {
  const dir = join(tempDir("hone-odd-"), id);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const load = async (id: string, dir: string) => (BENCHMARKS[id] as { load(d: string): unknown }).load(dir);
const GSM_ROW = JSON.stringify({ question: "q", answer: "work\n#### 5" });

describe("dataset readers on odd rows: a clear error naming the file and row", () => {
  it("refuses a null, array or scalar row in JSON Lines and JSON arrays", async () => {
    const gsm = folder("gsm8k", { "train.jsonl": `${GSM_ROW}\n`, "test.jsonl": `${GSM_ROW}\nnull\n` });
    await expect(load("gsm8k", gsm)).rejects.toThrow(/test\.jsonl:2: expected a JSON object, found null/);
    const math = folder("math500", { "test.jsonl": "[1, 2]\n" });
    await expect(load("math500", math)).rejects.toThrow(/test\.jsonl:1: expected a JSON object, found an array/);
    const hotpot = folder("hotpotqa", { "hotpot_dev_distractor_v1.json": "[null]" });
    await expect(load("hotpotqa", hotpot)).rejects.toThrow(/hotpot_dev_distractor_v1\.json\[0\]: expected a JSON object/);
    const trivia = folder("triviaqa", { "wikipedia-dev.json": '{"Data": [7]}' });
    await expect(load("triviaqa", trivia)).rejects.toThrow(/wikipedia-dev\.json Data\[0\]: expected a JSON object, found number/);
    const mbpp = folder("mbpp", { "sanitized-mbpp.json": "[null]" });
    await expect(load("mbpp", mbpp)).rejects.toThrow(/sanitized-mbpp\.json\[0\]: expected a JSON object/);
  });

  it("refuses a question without answers when reading, not when scoring", async () => {
    const nq = folder("nq-open", { "NQ-open.dev.jsonl": '{"question": "q", "answer": null}\n' });
    await expect(load("nq-open", nq)).rejects.toThrow(/NQ-open\.dev\.jsonl:1: field "answer" is not a non-empty list/);
    const trivia = folder("triviaqa", {
      "wikipedia-dev.json": JSON.stringify({ Data: [{ QuestionId: "q1", Question: "Q?", Answer: { NormalizedAliases: [] } }] }),
    });
    await expect(load("triviaqa", trivia)).rejects.toThrow(/Data\[0\]: field "Answer\.NormalizedAliases"/);
  });

  it("reads HF Parquet with nullable columns: a null where hone reads nothing is fine, elsewhere named", async () => {
    const fixtures = join(ROOT, "test", "fixtures", "qa-probe");
    const ok = (await load("aime2024", join(fixtures, "aime-null-solution"))) as { test: { gold: unknown }[] };
    expect(ok.test.map((t) => t.gold)).toEqual(["42", "4"]);
    await expect(load("aime2024", join(fixtures, "aime-null-problem"))).rejects.toThrow(
      /aime_2024_problems\.parquet row 1: field "Problem" is missing or not text/,
    );
  });
});
