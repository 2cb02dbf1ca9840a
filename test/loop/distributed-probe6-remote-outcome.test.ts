import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SlurmRunner } from "../../src/loop/distributed/slurm.ts";
import type { RolloutJobResult } from "../../src/loop/runner.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { CIRCLE_PACKING, tempDir } from "../helpers/fixtures.ts";
import { startQueue } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";
import { seedRollout } from "../helpers/rollout-job.ts";

// The Runner contract hands back each rollout's outcome with its result, and `hone optimize` prints each rollout's
// best score from it ("r01-k0: best 1.29729"). The local pool did; BullMQ and Slurm returned the id alone, so the same
// run printed "best -" for every rollout on workers or on a cluster, as if none had scored.

/** Each rollout's line of an optimize run's progress ("r01-k0" → "best 1.29729"). */
const rolloutLines = (stdout: string) =>
  Object.fromEntries([...stdout.matchAll(/^ {2}(r\d\d-[\w-]+): (.*)$/gm)].map((m) => [m[1] as string, m[2] as string]));

describe("an optimize run on BullMQ workers", () => {
  it("prints each rollout's best score as the same run on the local pool does", { timeout: 240_000 }, async (ctx) => {
    if (missing("redis-server")) return requireTool(ctx, "redis-server");
    const dir = tempDir("hone-probe6-outcome-");
    const args = (out: string) => [
      ...optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 4, json: false, out: join(dir, out) }),
      ...["--executor", "offline", "--proposer", "offline"],
    ];
    const local = await hone(args("local"));
    expect(local.code, local.stderr).toBe(0);
    const queue = await startQueue(1);
    try {
      const queued = await hone([...args("queued"), "--queue", queue.url]);
      expect(queued.code, queued.stderr).toBe(0);
      const lines = rolloutLines(queued.stdout);
      expect(Object.keys(lines).sort()).toEqual(["r00-seed", "r01-k0", "r01-k1"]);
      expect(
        Object.values(lines).every((l) => /^best \d/.test(l)),
        queued.stdout,
      ).toBe(true);
      expect(lines).toEqual(rolloutLines(local.stdout));
    } finally {
      await queue.stop();
    }
  });
});

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

describe("a Slurm job's rollout", () => {
  it("comes back with its outcome as its folder gives it", { timeout: 20_000 }, async () => {
    // Stand-ins for Slurm: the job is submitted (id 401), then no longer queued and forgotten (no accounting).
    const bin = join(tempDir(), "bin");
    mkdirSync(bin);
    for (const [cmd, body] of Object.entries({
      sbatch: "echo 401",
      squeue: "exit 0",
      scontrol: 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1',
      sacct: "exit 0",
    })) {
      writeFileSync(join(bin, cmd), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, cmd), 0o755);
    }
    process.env.PATH = `${bin}:${savedPath}`;
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const runDir = join(tempDir(), "run");
    const job = seedRollout(task, "r01-k0", join(runDir, "rollouts", "r01-k0"));
    // The rollout the job wrote before Slurm forgot it.
    mkdirSync(job.outDir, { recursive: true });
    const result = {
      job: "r01-k0",
      seed: 0,
      status: "completed",
      stopReason: "budget_spent",
      startScore: 0.9,
      bestScore: 1.25,
      improved: true,
      evaluations: { used: 2, valid: 2, invalid: 0, budget: 2 },
      usage: { model_calls: 3, seconds: 0.1 },
      iterations: 3,
    };
    writeFileSync(join(job.outDir, "result.json"), JSON.stringify(result));
    writeFileSync(join(job.outDir, "best_program.py"), "x = 2\n");
    const runner = new SlurmRunner({ runDir, task, taskRef: "circle-packing", executor: { model: "offline" }, pollMs: 20 });
    const results: RolloutJobResult[] = [];
    for await (const r of runner.run([job])) results.push(r);
    expect(results).toHaveLength(1);
    expect(results[0]?.error).toBeUndefined();
    expect(results[0]?.outcome?.bestScore).toBe(1.25);
    expect(results[0]?.outcome?.bestProgram).toBe("x = 2\n");
    expect(results[0]?.outcome?.evaluations.used).toBe(2);
  });
});
