// The one schema behind optimize's entry points: flags, config files and optimize() from TypeScript refuse the same
// bad values, each naming where the value came from, and fill the same defaults.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { numberish, optionsFromFlags } from "../../src/cli/optimize-flags.ts";
import { DEFAULT_PROPOSER_HARNESS, resolveSettings } from "../../src/loop/optimize.ts";
import { optimizeConfigSchema, readOptimizeConfig, recordedSettings } from "../../src/loop/optimize-config.ts";
import { DEFAULT_HARNESS } from "../../src/loop/run.ts";
import { resolveTask } from "../../src/task/builtin.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { asyncRefusal, refusal } from "../helpers/refusal.ts";

describe("optimize's flags are options of the one schema", () => {
  it("reads numbers as numbers and keeps anything else as text for the schema to refuse", () => {
    expect(numberish("3")).toBe(3);
    expect(numberish("-3")).toBe(-3);
    expect(numberish("abc")).toBe("abc");
    expect(numberish(" ")).toBe(" ");
  });

  it("refuses --rounds abc and --max-evals -3 as a usage error naming the flag and what it takes", () => {
    const rounds = refusal(() => optionsFromFlags({ task: "circle-packing", rounds: "abc" }));
    expect(rounds.exit).toBe("usage");
    expect(rounds.message).toBe("--rounds abc: a whole number from 1 to 1000");
    const evals = refusal(() => optionsFromFlags({ task: "circle-packing", maxEvals: -3 }));
    expect(evals.exit).toBe("usage");
    expect(evals.message).toBe("--max-evals -3: a whole number from 1 to 10000");
    expect(refusal(() => optionsFromFlags({ task: "t", proposals: 2.5 })).message).toMatch(/^--proposals 2.5: a whole number/);
    expect(refusal(() => optionsFromFlags({ task: "t", cache: "sometimes" })).message).toMatch(/^--cache: /);
    expect(refusal(() => optionsFromFlags({ task: "t", learning: "osmosis" })).message).toMatch(/^--learning: /);
    expect(refusal(() => optionsFromFlags({ task: "t", runner: "cloud" })).message).toMatch(/^--runner cloud: local or slurm/);
    expect(refusal(() => optionsFromFlags({ task: "t", queue: "http://x" })).message).toMatch(/^--queue http:\/\/x: a Redis URL/);
    expect(refusal(() => optionsFromFlags({ task: "t", proposerBaseUrl: "not a url" })).message).toMatch(
      /^--proposer-base-url: /,
    );
  });

  it("fills the schema's defaults, lets flags override the config file, and names the file for its own keys", () => {
    const d = optionsFromFlags({ task: "circle-packing" });
    expect(d).toMatchObject({ rounds: 3, proposals: 4, method: "harnessttt", concurrency: 4, noise_repeats: 3, seed: 0 });
    expect(d.max_evals).toBeUndefined(); // the task's own budget, filled in when the task is resolved
    const config = optimizeConfigSchema.parse({ task: "circle-packing", rounds: 5, max_evals: 7 });
    const merged = optionsFromFlags(
      { rounds: 2, paired: true, cold: true, param: ["diversity=true"] },
      { path: "h.yaml", config },
    );
    expect(merged).toMatchObject({ rounds: 2, max_evals: 7, paired: true, warm_pool: false, method_params: { diversity: true } });
    const bad = { ...config, concurrency: 0 };
    expect(refusal(() => optionsFromFlags({}, { path: "h.yaml", config: bad })).message).toBe(
      "h.yaml: concurrency: a whole number from 1 to 256",
    );
  });
});

describe("optimize() from TypeScript: a task and models are enough", () => {
  it("fills every other setting from the schema's defaults, the budget from the task", async () => {
    const task = await resolveTask("circle-packing");
    const s = await resolveSettings({ task: "circle-packing", executor: { model: "offline" }, proposer: { model: "offline" } });
    expect(s).toMatchObject({
      task: "circle-packing",
      seedHarness: DEFAULT_HARNESS,
      proposerHarness: DEFAULT_PROPOSER_HARNESS,
      rounds: 3,
      proposals: 4,
      method: "harnessttt",
      methodParams: {},
      maxEvals: task.budget.maxEvals,
      concurrency: 4,
      paired: false,
      noiseRepeats: 3,
      seed: 0,
      warmPool: true,
      learning: { mode: "context", digestTokens: 2000 },
    });
    expect((await resolveSettings({ task: "circle-packing", maxEvals: 5 })).maxEvals).toBe(5);
  });

  it("one name for the proposals per round; a run recorded before the rename (proposalsPerRound) reads as proposals", async () => {
    expect((await resolveSettings({ task: "circle-packing", proposals: 3 })).proposals).toBe(3);
    expect(recordedSettings({ rounds: 2, proposalsPerRound: 4 })).toEqual({ rounds: 2, proposals: 4 });
    expect(recordedSettings({ rounds: 2, proposals: 5 })).toEqual({ rounds: 2, proposals: 5 });
    const old = await asyncRefusal(() => resolveSettings({ task: "circle-packing", proposalsPerRound: 2 } as never));
    expect(old.message).toMatch(/unknown setting proposalsPerRound; known: .*proposals/);
  });

  it("records every folder absolute, so a run resumed or replayed from another folder finds them", () => {
    const here = process.cwd();
    const was = recordedSettings({
      task: "./my-task",
      tasksDir: "tasks-here",
      seedHarness: "seed",
      proposerHarness: "harnesses/proposer",
      method: "./my-method",
      cache: { mode: "off", dir: "cache" },
      benchmark: { id: "gsm8k", dataDir: "data" },
    });
    expect(was).toEqual({
      task: join(here, "my-task"),
      tasksDir: join(here, "tasks-here"),
      seedHarness: join(here, "seed"),
      proposerHarness: join(here, "harnesses", "proposer"),
      method: join(here, "my-method"),
      cache: { mode: "off", dir: join(here, "cache") },
      benchmark: { id: "gsm8k", dataDir: join(here, "data") },
    });
    // A built-in task's id and a built-in method's name are names, not folders.
    expect(recordedSettings({ task: "circle-packing", method: "gepa" })).toEqual({ task: "circle-packing", method: "gepa" });
    // Flags resolve the same way, so a resume repeating the command's relative flags compares equal.
    const flags = optionsFromFlags({ task: "./my-task", seedHarness: "seed", tasksDir: "t", cacheDir: "c" });
    expect([flags.task, flags.seed_harness, flags.tasks_dir, flags.cache?.dir]).toEqual(
      ["my-task", "seed", "t", "c"].map((p) => join(here, p)),
    );
  });

  it("reads a config file's folders against the file: the method given as a folder, the cache, the Slurm template", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "near-method"));
    writeFileSync(join(dir, "near-method", "method.json"), "{}");
    const file = join(dir, "hone.yaml");
    const text = (method: string) =>
      `task: circle-packing\nmethod: ${method}\ncache:\n  mode: off\n  dir: cache\nslurm:\n  template: job.sh\n`;
    writeFileSync(file, text("./methods/mine"));
    const c = readOptimizeConfig(file);
    expect([c.method, c.cache?.dir, c.slurm?.template]).toEqual([
      join(dir, "methods", "mine"),
      join(dir, "cache"),
      join(dir, "job.sh"),
    ]);
    writeFileSync(file, text("near-method"));
    expect(readOptimizeConfig(file).method).toBe(join(dir, "near-method"));
    writeFileSync(file, text("gepa"));
    expect(readOptimizeConfig(file).method).toBe("gepa");
  });

  it("refuses bad and unknown settings by their TypeScript names, and a run without a task", async () => {
    expect((await asyncRefusal(() => resolveSettings({ task: "circle-packing", maxEvals: -3 }))).message).toBe(
      "optimize(): maxEvals: a whole number from 1 to 10000",
    );
    expect((await asyncRefusal(() => resolveSettings({ task: "circle-packing", proposals: 0 }))).message).toMatch(
      /^optimize\(\): proposals: a whole number from 1 to 64/,
    );
    const unknown = await asyncRefusal(() => resolveSettings({ task: "circle-packing", max_evals: 3 } as never));
    expect(unknown.message).toMatch(/unknown setting max_evals; known: task, benchmark/);
    expect((await asyncRefusal(() => resolveSettings({}))).message).toMatch(/^optimize\(\): task: give exactly one of task/);
  });

  it("a QA search on Slurm is refused before anything is written: its questions run locally or on BullMQ workers", async () => {
    const { mkdtempSync, readdirSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { optimize } = await import("../../src/loop/optimize.ts");
    const outDir = join(mkdtempSync(join(tmpdir(), "hone-qa-slurm-")), "run");
    const err = await asyncRefusal(() =>
      optimize(
        {
          benchmark: { id: "gsm8k", train: 2, validation: 1, splitSeed: 0 },
          executor: { model: "offline" },
          proposer: { model: "offline" },
          slurm: {},
        },
        { outDir },
      ),
    );
    expect(err.message).toMatch(/--runner slurm .*QA search.*--queue/);
    expect(readdirSync(join(outDir, ".."))).toEqual([]);
  });
});
