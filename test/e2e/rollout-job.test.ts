import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../../src/harness/files.ts";
import { toJobData } from "../../src/loop/distributed/job-data.ts";
import { readRecordsFile } from "../../src/loop/recording.ts";
import { DEFAULT_HARNESS } from "../../src/loop/run.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { hone } from "../helpers/cli.ts";
import { CIRCLE_PACKING, ROOT, tempDir } from "../helpers/fixtures.ts";

// `hone rollout-job`, what a Slurm job script runs on a node: the rollout goes into --out on the shared filesystem,
// whole or not at all, with its records beside it (the coordinator's only way to get them); a rollout killed midway
// leaves its trajectory up to the kill in --out.partial, as a local one does.

const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });

function jobFile(executor: { model: string; offlineLatencyMs?: number }): string {
  const data = toJobData(
    {
      id: "r01-k0",
      harnessDir: DEFAULT_HARNESS,
      seed: 2,
      maxEvals: 2,
      startProgram: task.seedProgram,
      startEvaluation: { valid: true, score: 0.9, metrics: {}, artifacts: {}, seconds: 0 },
    },
    { runKey: "slurm-test", taskRef: task.dir, taskHash: contentHash(task.dir), executor },
  );
  const file = join(tempDir(), "job.json");
  writeFileSync(file, JSON.stringify(data));
  return file;
}

describe("hone rollout-job", () => {
  it("writes the rollout into --out with its records beside it", { timeout: 120_000 }, async () => {
    const out = join(tempDir(), "rollout");
    const r = await hone(["rollout-job", jobFile({ model: "offline" }), "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    for (const f of ["result.json", "trajectory.jsonl", "best_program.py"]) expect(existsSync(join(out, f)), f).toBe(true);
    const records = readRecordsFile(out);
    expect(records?.responses.length).toBeGreaterThan(0);
    expect(records?.evaluations.length).toBeGreaterThan(0);
    expect(existsSync(`${out}.partial`)).toBe(false);
  });

  it("killed mid-rollout (a Slurm time limit), leaves its trajectory so far in --out.partial and nothing under --out", {
    timeout: 120_000,
  }, async () => {
    const out = join(tempDir(), "rollout");
    const file = jobFile({ model: "offline", offlineLatencyMs: 60_000 }); // the first model call never returns in time
    const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), "rollout-job", file, "--out", out], {
      stdio: "ignore",
    });
    const trajectory = join(`${out}.partial`, "trajectory.jsonl");
    const started = () => existsSync(trajectory) && readFileSync(trajectory, "utf8").includes("rollout_start");
    for (let i = 0; i < 600 && !started(); i++) await new Promise((r) => setTimeout(r, 100));
    const exited = new Promise((r) => child.once("close", r));
    child.kill("SIGKILL");
    await exited;
    expect(started()).toBe(true);
    expect(existsSync(out)).toBe(false);
  });
});
