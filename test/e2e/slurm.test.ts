import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CellRecord } from "../../src/compare/cell.ts";
import { compareRecords } from "../../src/loop/compare-runs.ts";
import { mapSlurmState } from "../../src/loop/distributed/slurm-commands.ts";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { missing, requireTool } from "../helpers/requires.ts";
import { type SlurmCluster, startSlurm } from "../helpers/slurm-cluster.ts";

const dir = tempDir("hone-slurm-");
let cluster: SlurmCluster = { env: {}, unavailable: "not started", stop: () => {} };
let env: Record<string, string> = {};

beforeAll(async () => {
  if (missing("slurm")) return;
  cluster = await startSlurm(dir);
  env = cluster.env;
}, 60_000);

/** Skips a cluster test where Slurm is missing or the cluster could not come up (a failure on CI either way). */
const needCluster = (ctx: Parameters<typeof requireTool>[0]) =>
  requireTool(ctx, "slurm", missing("slurm") ?? cluster.unavailable ?? undefined);

afterAll(() => cluster.stop(), 30_000);

/** The Slurm job id of each rollout job of a run, as its coordinator wrote them beside their scripts. */
function slurmIds(runDir: string): Record<string, string> {
  const root = join(runDir, "slurm");
  if (!existsSync(root)) return {};
  const ids: Record<string, string> = {};
  for (const job of readdirSync(root)) {
    const file = join(root, job, "slurm-job-id");
    if (existsSync(file)) ids[job] = readFileSync(file, "utf8").trim();
  }
  return ids;
}

/** The arguments of the round the Slurm runs make, and that round on the local pool, run once for both tests. */
const ROUND = optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 3, seed: 6 });
let localRound: Promise<string> | undefined;
const localRun = () =>
  (localRound ??= (async () => {
    const out = join(tempDir(), "local");
    expect((await hone([...ROUND, "--out", out])).code).toBe(0);
    return out;
  })());

/** How two runs' records differ (compareRecords): none, for a run on Slurm and the same run on the local pool. */
function recordDifferences(a: string, b: string) {
  const [x, y] = [a, b].map((dir) => new Database(join(dir, "hone.db"), { readonly: true }));
  try {
    return compareRecords(x as Database.Database, y as Database.Database).differences;
  } finally {
    x?.close();
    y?.close();
  }
}

describe("Slurm", () => {
  it("maps Slurm job states to hone's", () => {
    expect(["PENDING", "RUNNING", "COMPLETING"].map(mapSlurmState)).toEqual(["active", "active", "active"]);
    expect(mapSlurmState("COMPLETED")).toBe("completed");
    expect(
      ["CANCELLED", "CANCELLED+", "TIMEOUT", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"].map(mapSlurmState),
    ).toEqual(Array(7).fill("failed"));
  });

  it("runs a round through sbatch jobs with the same records as the local pool", { timeout: 180_000 }, async (ctx) => {
    needCluster(ctx);
    const local = await localRun();
    const slurmOut = join(tempDir(), "slurm");
    const r = await hone([...ROUND, "--runner", "slurm", "--slurm-time", "10", "--out", slurmOut], { env, timeoutMs: 170_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(join(slurmOut, "slurm", "r01-k0", "job.sh"))).toBe(true);
    expect(readFileSync(join(slurmOut, "slurm", "r01-k0", "job.sh"), "utf8")).toMatch(/#SBATCH --time=10/);
    expect(recordDifferences(local, slurmOut)).toEqual([]);
  });

  it("records a cancelled job as a failed measurement, never a score", { timeout: 120_000 }, async (ctx) => {
    needCluster(ctx);
    const template = join(dir, "slow.sh");
    writeFileSync(
      template,
      "#!/bin/bash\n#SBATCH --job-name={{name}}\n#SBATCH --output={{output}}\n{{directives}}\nsleep 600\n{{command}}\n",
    );
    const out = join(tempDir(), "cancelled");
    const run = hone(
      optimizeArgs({ rounds: 1, proposals: 1, maxEvals: 2, out, extra: ["--runner", "slurm", "--slurm-template", template] }),
      { env, timeoutMs: 110_000 },
    );
    // Cancel every job the run submits (each would otherwise sleep for ten minutes).
    const cancel = setInterval(() => spawnSync("scancel", ["--full", "-u", "root"], { env: { ...process.env, ...env } }), 2000);
    const r = await run.finally(() => clearInterval(cancel));
    expect(r.code, r.stderr).toBe(0);
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const rows = db.prepare("SELECT id, status, error, best_score FROM rollouts").all() as {
      status: string;
      error: string;
      best_score: number | null;
    }[];
    db.close();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.status).toBe("failed");
      expect(row.error).toMatch(/Slurm job \d+ ended CANCELLED/);
      expect(row.best_score).toBeNull();
    }
  });

  it("a resumed run waits for the jobs its stopped coordinator left running, and submits none of them twice", {
    timeout: 240_000,
  }, async (ctx) => {
    needCluster(ctx);
    // Each job waits before its rollout, so that the coordinator is stopped while its jobs run.
    const template = join(dir, "late.sh");
    writeFileSync(
      template,
      "#!/bin/bash\n#SBATCH --job-name={{name}}\n#SBATCH --output={{output}}\n{{directives}}\nsleep 12\n{{command}}\n",
    );
    const local = await localRun();
    // A run directory that sbatch (its #SBATCH lines: %j is a pattern there) and bash (the command) must both read right.
    const out = join(tempDir(), "run 100%j $HOME's");
    const slurmArgs = [...ROUND, "--runner", "slurm", "--slurm-time", "10", "--slurm-template", template, "--out", out];
    const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...slurmArgs], {
      env: { ...process.env, ...env },
      stdio: "ignore",
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    const deadline = Date.now() + 90_000;
    while (Object.keys(slurmIds(out)).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const before = slurmIds(out);
    expect(Object.keys(before).length).toBeGreaterThan(0);
    child.kill("SIGINT"); // as Ctrl-C does; its jobs go on in Slurm
    expect(await exited).toBe(130);
    // Some of them are still in Slurm when the run resumes, for it to wait for (else this test would prove nothing).
    const queued = spawnSync("squeue", ["-h", "-o", "%i"], { env: { ...process.env, ...env }, encoding: "utf8" }).stdout;
    expect(Object.values(before).some((id) => queued.split("\n").includes(id))).toBe(true);
    const r = await hone(["optimize", "--resume", out, "--json"], { env, timeoutMs: 170_000 });
    expect(r.code, r.stderr).toBe(0);
    const after = slurmIds(out);
    for (const [job, id] of Object.entries(before)) expect(after[job], job).toBe(id);
    expect(recordDifferences(local, out)).toEqual([]);
  });

  it("runs a hone compare grid's cells on Slurm, search and test split, with the local pool's cell records", {
    timeout: 240_000,
  }, async (ctx) => {
    needCluster(ctx);
    const file = join(dir, "grid.yaml");
    writeFileSync(
      file,
      [
        "name: slurm-grid",
        "tasks: [{ name: packing, splits: { train: [circle-packing] } }]",
        `harnesses: [{ name: initial, path: ${join(ROOT, "harnesses", "initial")} }]`,
        "methods: [{ method: random }]",
        "seeds: [0]",
        "budget: { unit: evaluator_calls, size: 6 }",
        "search: { proposals: 1, max_evals: 2, noise_repeats: 1, concurrency: 1 }",
        "repeats: 1",
        "",
      ].join("\n"),
    );
    const local = join(tempDir(), "local");
    expect((await hone(["compare", file, "--out", local], { timeoutMs: 120_000 })).code).toBe(0);
    const out = join(tempDir(), "slurm");
    const r = await hone(["compare", file, "--out", out, "--runner", "slurm", "--slurm-time", "10"], { env, timeoutMs: 200_000 });
    expect(r.code, r.stderr).toBe(0);
    const cell = (root: string) => {
      const c = JSON.parse(readFileSync(join(root, "packing+initial+random", "seed-0", "cell.json"), "utf8")) as CellRecord;
      return { ...c, finished: "", cost: { ...c.cost, seconds: 0 } };
    };
    expect(cell(out)).toEqual(cell(local));
    // The search's rollouts and the test split's repeats were sbatch jobs (their scripts stay beside them).
    const scripts = readdirSync(out, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith("job.sh"));
    expect(scripts.some((f) => f.includes(".seed-harness"))).toBe(true);
    expect(scripts.some((f) => f.startsWith("packing+initial+random"))).toBe(true);
  });

  it("refuses --runner slurm for a grid with QA rows, before anything is written", async () => {
    const file = join(dir, "qa-grid.yaml");
    writeFileSync(
      file,
      [
        "name: qa-slurm",
        "benchmarks: [{ benchmark: gsm8k, data_dir: " +
          JSON.stringify(join(ROOT, "test", "fixtures", "datasets")) +
          ", splits: { train: { limit: 2 }, validation: { limit: 2 }, test: { limit: 2 } } }]",
        `harnesses: [{ name: initial, path: ${join(ROOT, "harnesses", "initial")} }]`,
        "methods: [{ method: random }]",
        "seeds: [0]",
        "budget: { unit: evaluator_calls, size: 40 }",
        "",
      ].join("\n"),
    );
    const out = join(tempDir(), "qa");
    const r = await hone(["compare", file, "--out", out, "--runner", "slurm"]);
    expect(r.code, r.stderr).toBe(5);
    expect(r.stderr).toMatch(/\(benchmarks\): --runner slurm runs discovery tasks. rollouts/);
    expect(existsSync(out)).toBe(false);
  });
});
