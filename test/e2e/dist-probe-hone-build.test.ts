import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, cpSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BullmqRunner } from "../../src/loop/distributed/bullmq.ts";
import { QUEUE_NAME } from "../../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";
import type { RolloutJobResult } from "../../src/loop/runner.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, ROOT, tempDir } from "../helpers/fixtures.ts";
import { fileRedis, stopped } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";
import { seedRollout } from "../helpers/rollout-job.ts";

// A worker from another hone checkout: the built-in tasks' evaluators import hone's shared checks
// (src/task/python/hone_checks.py), which the task folder's content hash does not cover, so the task's hash matches
// while the worker would score programs with other checks. The job names the coordinator's hone; the worker refuses.

let url = "";
let stopRedis = async () => {};
let worker: ChildProcess | undefined;

/** A copy of this hone checkout (sources run through tsx) whose shared evaluation checks were edited. */
function otherHone(): string {
  const root = join(tempDir(), "hone");
  for (const part of ["bin", "src", "tasks", "harnesses", "package.json", "tsconfig.json"])
    cpSync(join(ROOT, part), join(root, part), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  appendFileSync(join(root, "src", "task", "python", "hone_checks.py"), "\n# another hone's checks\n");
  return root;
}

beforeAll(async () => {
  if (missing("redis-server")) return;
  ({ url, stop: stopRedis } = await fileRedis(12)); // a database of this file's own
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

afterAll(async () => {
  if (worker) await stopped(worker);
  if (url) {
    const queue = new Queue(QUEUE_NAME, { connection: connectionFrom(url) });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
  await stopRedis();
});

describe("a worker on another hone", () => {
  it("refuses the job, naming what differs, though the task's content hash matches", { timeout: 120_000 }, async () => {
    const root = otherHone();
    worker = spawn(process.execPath, [join(root, "bin", "hone.js"), "worker", "--queue", url, "--concurrency", "1"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    await new Promise<void>((resolve, reject) => {
      worker?.stdout?.on("data", (d) => / ready on /.test(String(d)) && resolve());
      worker?.on("close", (code) => reject(new Error(`the worker exited with ${code} before it was ready`)));
    });
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const runner = new BullmqRunner({
      url,
      runKey: `other-hone-${Date.now()}`,
      task,
      taskRef: "circle-packing",
      executor: { model: "offline" },
      attempts: 1,
    });
    const results: RolloutJobResult[] = [];
    try {
      for await (const r of runner.run([seedRollout(task, "j1", join(tempDir(), "j1"))])) results.push(r);
    } finally {
      await runner.close();
    }
    expect(results).toHaveLength(1);
    expect(results[0]?.error).toMatch(
      /this hone differs from the coordinator's \(evaluation runtime \(src\/task\/python\) [0-9a-f]{12} here, [0-9a-f]{12} on the coordinator\); refusing to measure with a different hone/,
    );
  });
});
