import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runReceipt } from "../../src/loop/receipt.ts";
import { HONE_VERSION } from "../../src/measure/identity.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A `hone eval` or `hone train` receipt said "scorer -" (train) and named neither the hone version that measured
// nor what was measured beyond "gsm8k/test": a data file edited or re-fetched with other content (hone reads any
// gsm8k/test.jsonl it finds, unchecked) gave a receipt identical to the original's. Discovery runs carry both in
// their measurement identity; QA runs now record the questions' sha256 and hone's version in their summary.

const eval3 = (dataDir: string, out: string) => [
  "eval",
  "--harness",
  join(ROOT, "harnesses", "qa"),
  "--benchmark",
  "gsm8k",
  "--split",
  "test",
  "--limit",
  "3",
  "--model",
  "offline",
  "--data-dir",
  dataDir,
  "--out",
  out,
];

describe("QA runs' receipts name the questions and the hone version", () => {
  it("hone eval: the same questions give the same digest, an edited gold another", { timeout: 120_000 }, async () => {
    const cwd = tempDir("eval-receipt-");
    const data = join(ROOT, "test", "fixtures", "datasets");
    const edited = join(cwd, "data");
    cpSync(join(data, "gsm8k"), join(edited, "gsm8k"), { recursive: true });
    const file = join(edited, "gsm8k", "test.jsonl");
    const [first, ...rest] = readFileSync(file, "utf8").split("\n");
    const row = JSON.parse(first as string) as { answer: string };
    row.answer = row.answer.replace(/#### (\d+)/, (_m, n) => `#### ${Number(n) + 1}`);
    writeFileSync(file, [JSON.stringify(row), ...rest].join("\n"));

    const runs = ["a", "b", "c"].map((x) => join(cwd, x));
    for (const [i, out] of runs.entries()) {
      const r = await hone(eval3(i === 2 ? edited : data, out), { cwd });
      expect(r.code, r.stderr).toBe(0);
    }
    const [a, b, c] = runs.map((d) => runReceipt(d));
    expect(a?.hone).toBe(HONE_VERSION);
    expect(a?.task.panel_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(b?.task.panel_sha256).toBe(a?.task.panel_sha256);
    expect(c?.task.panel_sha256).not.toBe(a?.task.panel_sha256);
    const text = await hone(["receipt", runs[0] as string], { cwd });
    expect(text.stdout).toMatch(/^task\s+gsm8k\/test \(questions sha256 [0-9a-f]{12}\)$/m);
    expect(text.stdout).toMatch(/^scorer\s+gsm8k's official scorer: strict-match \(the accuracy\), flexible-extract$/m);
    expect(text.stdout).toMatch(new RegExp(`^hone\\s+${HONE_VERSION}$`, "m"));
  });

  it("hone train: the scorer line and the panel's digest", { timeout: 120_000 }, async () => {
    const cwd = tempDir("train-receipt-");
    const data = join(ROOT, "test", "fixtures", "datasets");
    writeFileSync(
      join(cwd, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 2, data_dir: ${data}}\nestimator: {kind: patch_queue, patches: ["--- a/x\\n+++ b/x\\n"]}\nout: run\n`,
    );
    const r = await hone(["train", "--config", "train.yaml", "--epochs", "1"], { cwd });
    expect(r.code, r.stderr).toBe(0);
    const receipt = runReceipt(join(cwd, "run"));
    expect(receipt.hone).toBe(HONE_VERSION);
    expect(receipt.task.panel_sha256).toMatch(/^[0-9a-f]{64}$/);
    const text = await hone(["receipt", join(cwd, "run")], { cwd });
    expect(text.stdout).toMatch(/^scorer\s+gsm8k's official scorer \(a task is solved when its accuracy rule says so\)$/m);
    expect(text.stdout).toMatch(new RegExp(`^hone\\s+${HONE_VERSION}$`, "m"));
  });
});
