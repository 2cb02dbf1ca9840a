// Throughput of 200 short rollouts (offline model, circle packing, 1 evaluation each) on the local pool and on two
// BullMQ workers on this machine, side by side in each repetition, and the queue's overhead per job. Both sides
// are warmed by an untimed batch first (the workers' pools and models too), both run 8 rollouts at a time with 4
// evaluator processes in all (one local pool of 4; two workers of concurrency 4 with --pool-size 2 each: by default
// each would start 4, 8 in all), and the
// overhead is per job slot: the wall-time difference times the 8 jobs at a time, divided by the jobs.
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
import { report, spread } from "./lib.ts";

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 200);
const REPS = Number(process.env.BENCH_REPS ?? 2);
const AT_ONCE = 8;
const ROOT = join(import.meta.dirname, "..");

export async function benchQueue(): Promise<boolean> {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "pipe" });
  } catch {
    console.log("\n## queue (issue 9): skipped, redis-server is not installed");
    return false;
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
        spawn(
          process.execPath,
          [join(ROOT, "bin", "hone.js"), "worker", "--queue", url, "--concurrency", "4", "--pool-size", "2"],
          {
            stdio: "ignore",
          },
        ),
      );
    const task = loadTaskFolder(`${BUILTIN_TASKS_DIR}/circle-packing`, { id: "circle-packing" });
    const start = { valid: true, score: 0.9597642169962064, metrics: {}, artifacts: {}, seconds: 0 };
    const jobs = (tag: string, n = ROLLOUTS): RolloutJob[] =>
      Array.from({ length: n }, (_, i) => ({
        id: `${tag}-${i}`,
        harnessDir: DEFAULT_HARNESS,
        startProgram: task.seedProgram,
        startEvaluation: start,
        seed: i,
        maxEvals: 1,
        outDir: join(dir, tag, String(i)),
      }));
    const time = async (runner: Runner, tag: string) => {
      for await (const r of runner.run(jobs(`${tag}-warm`, AT_ONCE))) if (r.error) throw new Error(r.error);
      const t = performance.now();
      for await (const r of runner.run(jobs(tag))) if (r.error) throw new Error(r.error);
      const seconds = (performance.now() - t) / 1000;
      await runner.close();
      return seconds;
    };
    const model = await resolveModel({ model: "offline" });
    const pool = await EvaluatorPool.start(task, { size: 4 });
    const local: number[] = [];
    const queued: number[] = [];
    for (let r = 0; r < REPS; r++) {
      local.push(
        await time(
          new LocalRunner({ task, model: model.model, evaluate: (p) => pool.evaluate(p), concurrency: AT_ONCE }),
          `local-${r}`,
        ),
      );
      const runKey = `bench-${Date.now()}-${r}`;
      queued.push(
        await time(new BullmqRunner({ url, runKey, task, taskRef: task.dir, executor: { model: "offline" } }), `queued-${r}`),
      );
    }
    pool.close();
    await model.close();
    const overhead = queued.map((q, i) => (((q - (local[i] as number)) * AT_ONCE) / ROLLOUTS) * 1000);
    return report(
      `queue (issue 9): ${ROLLOUTS} rollouts, offline model, 1 circle-packing evaluation each, ${AT_ONCE} at a time; ${REPS} repetitions`,
      [
        ["local pool (concurrency 8, one pool of 4)", spread(local, " s", 1)],
        ["two BullMQ workers (concurrency 4, a pool of 2 each)", spread(queued, " s", 1)],
        [
          "rollouts/s local / queued",
          `${(ROLLOUTS / (local[0] as number)).toFixed(1)} / ${(ROLLOUTS / (queued[0] as number)).toFixed(1)} (first repetition)`,
        ],
      ],
      [{ goal: { figure: "queue overhead per job", op: "<=", value: 5, unit: " ms" }, samples: overhead }],
    );
  } finally {
    for (const w of workers) w.kill("SIGKILL");
    redis.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchQueue();
