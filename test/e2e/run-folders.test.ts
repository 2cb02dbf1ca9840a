import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { copyOf, GENERATED_HARNESS, makeTask, ROOT, tempDir, write } from "../helpers/fixtures.ts";

// A sweep started as researchers start one, `for s in 1 2 3; do hone optimize … --seed $s & done`, without --out:
// the runs start in the same second and so pick the same default name. Before, the first took the folder and the
// others exited 2 (one told it was "resuming", one that the folder was not empty); now each takes the next free name.

describe("runs started together without --out (CLI, offline model)", () => {
  it("hone optimize: three at once each run to the end in a folder of its own", { timeout: 120_000 }, async () => {
    const cwd = tempDir("sweep-");
    const args = (seed: number) => [
      "optimize",
      "--task",
      "circle-packing",
      "--rounds",
      "1",
      "--max-evals",
      "2",
      "--cache",
      "off",
      "--seed",
      String(seed),
      "--json",
    ];
    const runs = await Promise.all([1, 2, 3].map((seed) => hone(args(seed), { cwd })));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const dirs = runs.map((r) => JSON.parse(r.stdout).run_dir as string);
    expect(new Set(dirs).size).toBe(3);
    expect(readdirSync(join(cwd, "runs")).sort()).toEqual(dirs.map((d) => d.split("/").pop()).sort());
    for (const d of dirs) expect(readdirSync(d)).toContain("hone.db");
  });

  it("hone train: two at once each take a folder, and one that cannot start leaves none", { timeout: 120_000 }, async () => {
    const cwd = tempDir("sweep-train-");
    const data = join(ROOT, "test", "fixtures", "datasets");
    const config = (dataDir: string) =>
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 2, data_dir: ${dataDir}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\n`;
    write(join(cwd, "train.yaml"), config(data));
    const train = ["train", "--config", "train.yaml", "--epochs", "1", "--json"];
    const runs = await Promise.all([hone(train, { cwd }), hone(train, { cwd })]);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const outs = runs.map((r) => JSON.parse(r.stdout).out as string);
    expect(new Set(outs).size).toBe(2);
    expect(readdirSync(join(cwd, "runs")).sort()).toEqual(outs.map((d) => d.split("/").pop()).sort());
    write(join(cwd, "broken.yaml"), config(join(cwd, "no-data")));
    const broken = await hone(["train", "--config", "broken.yaml", "--epochs", "1"], { cwd });
    expect(broken.code).not.toBe(0);
    expect(readdirSync(join(cwd, "runs")).sort()).toEqual(outs.map((d) => d.split("/").pop()).sort());
  });

  it("hone optimize: Ctrl-C while the seed is checked leaves no folder", { timeout: 60_000 }, async () => {
    const cwd = tempDir("stop-setup-");
    // The seed's tool spends ~0.8 s of CPU in each self-test call: the run's folder is held, its records not begun.
    const seed = copyOf(GENERATED_HARNESS);
    write(
      join(seed, "custom_tools/evaluate_block.js"),
      "async function run(ctx, args) {\n  const t = Date.now();\n  while (Date.now() - t < 800) {}\n  return 'ok';\n}\n",
    );
    const task = makeTask("def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
    const args = ["optimize", "--task", task, "--seed-harness", seed, "--rounds", "1", "--cache", "off"];
    const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    const runs = join(cwd, "runs");
    for (const t = Date.now(); !(existsSync(runs) && readdirSync(runs).length > 0); ) {
      if (Date.now() - t > 30_000 || child.exitCode !== null) throw new Error(`no run folder appeared:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(readdirSync(join(runs, readdirSync(runs)[0] as string))).not.toContain("hone.db");
    child.kill("SIGINT");
    expect(await exited, stderr).toBe(130);
    expect(readdirSync(runs)).toEqual([]);
    expect(stderr).not.toContain("--resume");
  });
});
