// Every registered benchmark is a target of `hone optimize --benchmark` (in this process, to keep the suite short) and
// a panel of `hone train` (through the CLI, as a user runs it), on its shipped fixture. The oracle harness answers
// every benchmark's questions right, so the search's validation score and the trainer's solved count are exact
// checks of the plumbing (splits, scorer, records), not of the offline model.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { optimize } from "../../src/loop/optimize.ts";
import { BENCHMARKS, loadSplit, splitsOf } from "../../src/task/qa/benchmarks.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const FIXTURES = join(ROOT, "test", "fixtures", "datasets");
const ORACLE = join(ROOT, "harnesses", "oracle");

describe.each(Object.keys(BENCHMARKS))("the %s fixture", (id) => {
  it("is searched by hone optimize (train/validation slices) and trained on as a hone train panel", async () => {
    const searchable = (await loadSplit(id, "train", { dir: FIXTURES })).length > 0;
    const search = optimize(
      {
        benchmark: { id, train: 2, validation: 1, dataDir: FIXTURES, splitSeed: 0 },
        seedHarness: ORACLE,
        executor: { model: "offline" },
        proposer: { model: "offline" },
        method: "greedy",
        rounds: 1,
        proposals: 1,
        cache: { mode: "off" },
      },
      { outDir: join(tempDir(), "opt") },
    );
    // A fixture too small for a search pool (MuSiQue's 2 questions; MBPP's test rows only) is refused by name.
    if (searchable) expect((await search).validationScore).toBe(1);
    else await expect(search).rejects.toThrow(new RegExp(`^${id}: its train split has no questions in`));

    const dir = tempDir();
    const split = splitsOf(BENCHMARKS[id]!).includes("test") ? "test" : "validation";
    writeFileSync(
      join(dir, "train.yaml"),
      `harness: ${ORACLE}\npanel: {benchmark: ${id}, split: ${split}, limit: 2, data_dir: ${FIXTURES}}\n` +
        "estimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\n",
    );
    const r = await hone(["train", "--config", join(dir, "train.yaml"), "--epochs", "1", "--out", join(dir, "run"), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const epochs = (JSON.parse(r.stdout) as { epochs: { baseline_solved: number }[] }).epochs;
    expect(epochs[0]?.baseline_solved).toBe(2);
  }, 120_000);
});
