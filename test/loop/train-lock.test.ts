import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { readTrainConfig } from "../../src/loop/train-config.ts";
import { openTrainRun } from "../../src/loop/train-setup.ts";
import { lockRunDir } from "../../src/store/run-lock.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// A training run is held by the process that opened it until it closes: a resume of it meanwhile is refused.

describe("openTrainRun", () => {
  it("holds its run directory until closed, and refuses a second opening meanwhile", async () => {
    const dir = tempDir("train-lock-");
    const data = join(ROOT, "test", "fixtures", "datasets");
    write(
      join(dir, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 4, data_dir: ${data}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\n`,
    );
    const out = join(dir, "run");
    const run = await openTrainRun({ config: readTrainConfig(join(dir, "train.yaml")), out });
    expect(lockRunDir(out)).toMatchObject({ heldBy: { pid: process.pid } });
    const second = openTrainRun({ out, resume: true });
    await expect(second).rejects.toThrow(HoneError);
    await expect(second).rejects.toThrow(`${out} is being written by another hone process (pid ${process.pid}`);
    await run.close();
    const free = lockRunDir(out);
    expect("release" in free).toBe(true);
    if ("release" in free) free.release();
  });
});
