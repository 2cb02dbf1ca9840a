// Throughput of 200 short rollouts (offline model, circle packing, 1 evaluation each) on the local pool and on two
// BullMQ workers on this machine, side by side, and the queue's overhead per job.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BullmqRunner } from "../src/loop/distributed/bullmq.ts";
import { DEFAULT_HARNESS } from "../src/loop/run.ts";
import { LocalRunner, type RolloutJob, type Runner } from "../src/loop/runner.ts";
import { resolveModel } from "../src/model/resolve.ts";
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import { EvaluatorPool } from "../src/task/evaluator-pool.ts";
import { report } from "./lib.ts";

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 200);
const ROOT = join(import.meta.dirname, "..");

export async function benchQueue(): Promise<void> {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "pipe" });
  } catch {
    console.log("\n## queue (issue 9): skipped, redis-server is not installed");
    return;
  }
  const port = 6400 + Math.floor(Math.random() * 500);
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const url = `redis://127.0.0.1:${port}`;
  const workers: ChildProcess[] = [];
  const dir = mkdtempSync(join(tmpdir(), "hone-bench-queue-"));
  try {
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 2; i++)
      workers.push(
        spawn(process.execPath, [join(ROOT, "bin", "hone.js"), "worker", "--queue", url, "--concurrency", "4"], {
          stdio: "ignore",
        }),
      );
    const task = loadTaskFolder(`${BUILTIN_TASKS_DIR}/circle-packing`, { id: "circle-packing" });
    const start = { valid: true, score: 0.9597642169962064, metrics: {}, artifacts: {}, seconds: 0 };
    const jobs = (tag: string): RolloutJob[] =>
      Array.from({ length: ROLLOUTS }, (_, i) => ({
        id: `${tag}-${i}`,
        harnessDir: DEFAULT_HARNESS,
        startProgram: task.seedProgram,
        startEvaluation: start,
        seed: i,
        maxEvals: 1,
        outDir: join(dir, tag, String(i)),
      }));
    const time = async (runner: Runner, tag: string) => {
      const t = performance.now();
      for await (const r of runner.run(jobs(tag))) if (r.error) throw new Error(r.error);
      await runner.close();
      return (performance.now() - t) / 1000;
    };
    const model = await resolveModel({ model: "offline" });
    const pool = await EvaluatorPool.start(task, { size: 4 });
    const local = await time(
      new LocalRunner({ task, model: model.model, evaluate: (p) => pool.evaluate(p), concurrency: 8 }),
      "local",
    );
    pool.close();
    await model.close();
    await new Promise((r) => setTimeout(r, 3000));
    const queued = await time(
      new BullmqRunner({ url, runKey: `bench-${Date.now()}`, task, taskRef: task.dir, executor: { model: "offline" } }),
      "queued",
    );
    report(`queue (issue 9): ${ROLLOUTS} rollouts, offline model, 1 circle-packing evaluation each`, [
      ["local pool (concurrency 8)", `${(ROLLOUTS / local).toFixed(1)} rollouts/s (${local.toFixed(1)} s)`],
      ["two BullMQ workers (concurrency 4 each)", `${(ROLLOUTS / queued).toFixed(1)} rollouts/s (${queued.toFixed(1)} s)`],
      ["queue overhead per job", `${(((queued - local) / ROLLOUTS) * 1000).toFixed(1)} ms (both on this 2-core machine)`],
    ]);
  } finally {
    for (const w of workers) w.kill("SIGKILL");
    redis.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchQueue();
