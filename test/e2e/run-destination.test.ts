import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// Where `hone run` builds a run (a hidden `.<out>.partial` beside --out, held by the run's process) and how two runs
// aimed at one folder meet: before, both were built under names of their own and the one that finished last removed
// the other's finished run, while both said they had written it.

const runArgs = (out: string | undefined, seed: number, latencyMs: number, evals = 3) => [
  "run",
  "--task",
  "circle-packing",
  "--model",
  "offline",
  "--offline-latency-ms",
  String(latencyMs),
  "--max-evals",
  String(evals),
  "--seed",
  String(seed),
  "--json",
  ...(out ? ["--out", out] : []),
];

/** A `hone run` in the background: its process, and its result once it exits. */
function startRun(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (c) => (stdout += c));
  child.stderr?.on("data", (c) => (stderr += c));
  const done = new Promise<CliResult>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
  return { child, done };
}

/** Resolves once `path` exists (the run has begun writing), or throws after 30 s. */
async function until(path: string): Promise<void> {
  for (const t = Date.now(); !existsSync(path); ) {
    if (Date.now() - t > 30_000) throw new Error(`${path} never appeared`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A run of seed 1 into `<a new folder>/x`, begun in the background, once `file` is in its hidden folder (`folder`).
 * Its model answers after `latencyMs` a call: long enough for what the test does meanwhile on a loaded machine.
 */
async function begun(file: string, latencyMs: number, env: NodeJS.ProcessEnv = {}, folder = ".x.partial") {
  const parent = tempDir();
  const out = join(parent, "x");
  const run = startRun(runArgs(out, 1, latencyMs, 3), env);
  await until(join(parent, folder.replace("<pid>", String(run.child.pid)), file));
  return { parent, out, run };
}

const seedOf = (dir: string) => JSON.parse(readFileSync(join(dir, "result.json"), "utf8")).seed as number;

describe("hone run's destination (CLI, offline model)", () => {
  it("refuses a second run into an --out the first is still building, naming its process, and keeps the first's run", {
    timeout: 60_000,
  }, async () => {
    const { parent, out, run: first } = await begun("hone.db", 800);
    const second = await hone(runArgs(out, 2, 0));
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`${out} is being written by another hone process (pid ${first.child.pid}`);
    expect(second.stderr).toContain("choose another --out");
    const r = await first.done;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).out_dir).toBe(out);
    expect(seedOf(out)).toBe(1);
    // Nothing beside the run: no hidden folder left, no lock file in it.
    expect(readdirSync(parent)).toEqual(["x"]);
    expect(readdirSync(out)).not.toContain("hone.lock");
  });

  it("gives runs started at once without --out a folder each", { timeout: 60_000 }, async () => {
    const cwd = tempDir();
    const runs = await Promise.all([1, 2, 3].map((seed) => hone(runArgs(undefined, seed, 100, 2), { cwd })));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    const dirs = runs.map((r) => JSON.parse(r.stdout).out_dir as string);
    expect(new Set(dirs).size).toBe(3);
    expect(dirs.map(seedOf)).toEqual([1, 2, 3]);
    expect(readdirSync(join(cwd, "runs")).filter((f) => f.startsWith("."))).toEqual([]);
  });

  it("clears what a killed run left for the next run into the same --out", { timeout: 60_000 }, async () => {
    const { parent, out, run: killed } = await begun("trajectory.jsonl", 300);
    killed.child.kill("SIGKILL");
    await killed.done;
    expect(readdirSync(join(parent, ".x.partial"))).toContain("trajectory.jsonl");
    expect(existsSync(out)).toBe(false);
    const r = await hone(runArgs(out, 2, 0));
    expect(r.code, r.stderr).toBe(0);
    expect(seedOf(out)).toBe(2);
    const starts = readFileSync(join(out, "trajectory.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.includes('"rollout_start"'));
    expect(starts).toHaveLength(1);
    expect(readdirSync(parent)).toEqual(["x"]);
  });

  it("does not replace an --out that something else filled while the run went, and keeps the run whole", {
    timeout: 60_000,
  }, async () => {
    const { parent, out, run } = await begun("hone.db", 600);
    mkdirSync(out);
    writeFileSync(join(out, "notes.txt"), "mine\n");
    const r = await run.done;
    expect(r.code).toBe(2);
    const partial = join(parent, ".x.partial");
    const kept = join(parent, `.x.kept-${run.child.pid}`);
    expect(r.stderr).toContain(
      `${out} is not an empty folder any more (something else wrote there while this run went); this run is kept in ${kept}`,
    );
    expect(readdirSync(out)).toEqual(["notes.txt"]);
    expect(seedOf(kept)).toBe(1);
    expect(existsSync(partial)).toBe(false);
  });

  it("with the lock off (HONE_RUN_LOCK=off), keeps a second run into one --out beside the first's, not mixed in", {
    timeout: 60_000,
  }, async () => {
    const off = { HONE_RUN_LOCK: "off" };
    const { parent, out, run: slow } = await begun("hone.db", 1500, off, ".x.partial-<pid>");
    const fast = await hone(runArgs(out, 2, 0), { env: off });
    expect(fast.code, fast.stderr).toBe(0);
    expect(seedOf(out)).toBe(2);
    const r = await slow.done;
    expect(r.code).toBe(2);
    const kept = join(parent, `.x.kept-${slow.child.pid}`);
    expect(r.stderr).toContain(`this run is kept in ${kept}`);
    expect(seedOf(kept)).toBe(1);
    expect(seedOf(out)).toBe(2);
    expect(readdirSync(parent).sort()).toEqual([`.x.kept-${slow.child.pid}`, "x"]);
  });

  it("stopped by Ctrl-C, leaves nothing behind", { timeout: 60_000 }, async () => {
    const { parent, run } = await begun("trajectory.jsonl", 1000);
    run.child.kill("SIGINT");
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(readdirSync(parent)).toEqual([]);
  });
});

describe("hone eval's folder (CLI, offline model)", () => {
  const evalArgs = (out: string, seed: number, latencyMs: number) => [
    "eval",
    ...["--harness", join(ROOT, "harnesses", "qa"), "--benchmark", "gsm8k", "--split", "test", "--limit", "4"],
    ...["--concurrency", "1", "--model", "offline", "--offline-latency-ms", String(latencyMs), "--seed", String(seed)],
    ...["--data-dir", join(ROOT, "test", "fixtures", "datasets"), "--out", out, "--json"],
  ];

  it("refuses a second eval into an --out the first is measuring, naming its process; the first's is whole", {
    timeout: 60_000,
  }, async () => {
    const out = join(tempDir(), "ev");
    const first = startRun(evalArgs(out, 1, 800));
    await until(join(out, "hone.db"));
    const second = await hone(evalArgs(out, 2, 0));
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`${out} is being written by another hone process (pid ${first.child.pid}`);
    const r = await first.done;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")).completed).toBe(4);
    expect(readdirSync(join(out, "trajectories"))).toHaveLength(4);
  });
});
