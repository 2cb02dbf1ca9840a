import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluateBenchmark } from "../../src/loop/eval.ts";
import { optimize } from "../../src/loop/optimize.ts";
import { replayRun } from "../../src/loop/replay.ts";
import { DEFAULT_HARNESS, runHarness } from "../../src/loop/run.ts";
import { readTrainConfig } from "../../src/loop/train-config.ts";
import { openTrainRun } from "../../src/loop/train-setup.ts";
import { copyOf, ROOT, tempDir } from "../helpers/fixtures.ts";

// What a replay and a resume start from: the folder a replay writes in, and the seed harness the run kept.
//
// Where `hone replay` writes without --out: the first free `<run>-replay[-N]`, taken by making it. Two replays started
// together in one process are the sharpest case: the second picks its name before the first holds its folder (the
// first's claim waits behind an await), and a second claim in one process is refused as another process's is. Before,
// both picked `<run>-replay` and the second was refused as "being written by another hone process".

describe("a replay's folder without --out", () => {
  it("is one of its own for each of two replays started together", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const small = { rounds: 1, proposals: 2, maxEvals: 2, noiseRepeats: 1, cache: { mode: "off" as const } };
    const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
    await optimize({ task: "circle-packing", ...models, ...small }, { outDir: run });
    const both = await Promise.all([replayRun(run), replayRun(run)]);
    expect(both.map((r) => r.differences)).toEqual([[], []]);
    expect(both.map((r) => r.replay).sort()).toEqual([join(dir, "run-replay"), join(dir, "run-replay-2")]);
    expect(readdirSync(dir).sort()).toEqual(["run", "run-replay", "run-replay-2"]);
  });

  it("is removed again when the replay cannot begin (the seed harness the run kept, broken since)", {
    timeout: 60_000,
  }, async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const seed = copyOf(DEFAULT_HARNESS);
    const small = { rounds: 1, proposals: 1, maxEvals: 2, noiseRepeats: 1, cache: { mode: "off" as const } };
    const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
    await optimize({ task: "circle-packing", seedHarness: seed, ...models, ...small }, { outDir: run });
    // The folder the run was started from may go: the replay reads the seed the run kept (candidates/r00-seed).
    rmSync(seed, { recursive: true });
    expect((await replayRun(run)).differences).toEqual([]);
    // That copy broken, optimize takes the folder the replay made, then refuses the seed: it empties the folder but
    // for its lock file, and the replay removes what is left.
    writeFileSync(join(run, "candidates", "r00-seed", "agent.yaml"), "model: [unclosed\n");
    await expect(replayRun(run)).rejects.toThrow(/agent\.yaml: is not valid YAML/);
    expect(readdirSync(dir).sort()).toEqual(["run", "run-replay"]);
  });
});

/** A train run of one epoch (a patch queue of one patch) on two questions of the fixtures' gsm8k, finished in `out`. */
async function trainOneEpoch(out: string): Promise<void> {
  const dir = tempDir();
  const patch =
    "diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -2,3 +2,3 @@\n final_answer exactly once with your answer in the requested format.\n \n-hone-hint: qa_strategy=last\n+hone-hint: qa_strategy=sum\n";
  writeFileSync(join(dir, "sum.diff"), patch);
  const data = join(ROOT, "test", "fixtures", "datasets");
  writeFileSync(
    join(dir, "train.yaml"),
    `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 2, data_dir: ${data}}\nestimator: {kind: patch_queue, patches: [sum.diff]}\ncriterion: {kind: strict_pareto}\n`,
  );
  const run = await openTrainRun({ config: readTrainConfig(join(dir, "train.yaml")), out });
  try {
    for await (const loss of run.trainer.epochs(1)) {
      loss.backward();
      run.optimizer.step();
    }
  } finally {
    await run.close();
  }
}

describe("a replay's writer, for each run kind", () => {
  // hone replay removes the folder on a stop with what the writer hands over once it holds it (test/e2e/stop.test.ts
  // stops an optimize replay): each kind hands it over once, before it writes anything, and keeps it when it finishes;
  // before that, the folder made for the replay's name is handed over.
  it("says, before writing, which folder it holds: optimize, eval, run and train", { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
    const small = { rounds: 1, proposals: 1, maxEvals: 2, noiseRepeats: 1, cache: { mode: "off" as const } };
    await optimize({ task: "circle-packing", ...models, ...small }, { outDir: join(dir, "optimize") });
    await evaluateBenchmark({
      harnessDir: join(ROOT, "harnesses", "qa"),
      benchmark: "bfcl-simple",
      split: "test",
      limit: 2,
      dataDir: join(ROOT, "test", "fixtures", "datasets"),
      model: "offline",
      outDir: join(dir, "eval"),
    });
    await runHarness(DEFAULT_HARNESS, "circle-packing", { model: "offline", maxEvals: 2, outDir: join(dir, "run") });
    await trainOneEpoch(join(dir, "train"));
    for (const kind of ["optimize", "eval", "run", "train"]) {
      const held: { dir: string; files: string[] }[] = [];
      const r = await replayRun(join(dir, kind), undefined, undefined, (d) => {
        held.push({ dir: d, files: readdirSync(d) });
      });
      expect(r.differences, kind).toEqual([]);
      // First the folder made for the name (empty), then the writer's, holding its lock file only.
      expect(
        held.map((h) => h.files),
        kind,
      ).toEqual([[], ["hone.lock"]]);
      expect(held[0]?.dir, kind).toBe(r.replay);
      // hone run builds in a hidden folder beside the replay's, put in place when it finishes.
      const at = held[1]?.dir as string;
      if (kind === "run") expect(dirname(at), kind).toBe(dir);
      else expect(at, kind).toBe(r.replay);
      expect(readdirSync(r.replay), kind).toContain("hone.db");
    }
  });
});

describe("the seed harness a run kept", () => {
  it("is what a resume checks: the run goes on with the folder it was started from gone", { timeout: 60_000 }, async () => {
    const run = join(tempDir(), "run");
    const seed = copyOf(DEFAULT_HARNESS);
    const small = { rounds: 1, proposals: 1, maxEvals: 2, noiseRepeats: 1, cache: { mode: "off" as const } };
    const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
    await optimize({ task: "circle-packing", seedHarness: seed, ...models, ...small }, { outDir: run });
    rmSync(seed, { recursive: true });
    // Before, the resume checked the folder the run was started from, and was refused: "…/copy: the seed harness is
    // refused".
    const resumed = await optimize({ task: "circle-packing" }, { outDir: run, resume: true, overrides: { rounds: 2 } });
    expect(resumed.rounds.map((r) => r.round)).toEqual([0, 1, 2]);
  });
});
