// Throughput of 200 short rollouts (offline model, circle packing, 1 evaluation each) on the local pool and on two
// BullMQ workers on this machine, side by side in each repetition, and the queue's overhead per job. Each rollout
// process (the local one, each worker) first runs 300 untimed jobs, since a process's CPU per job falls over its
// first few hundred as V8 optimizes (a worker or the local runner alone, windows of 100 jobs: 25-34 ms, then 13-16
// ms by the sixth), and each timed side begins with an untimed batch of 8; both run 8 rollouts at a time with 4
// evaluator processes in all (one local pool of 4; two workers of concurrency 4 with --pool-size 2 each: by default
// each would start 4, 8 in all), and the
// overhead is per job slot: the wall-time difference times the 8 jobs at a time, divided by the jobs. Both sides
// record every model call and evaluation into a run's hone.db as `hone optimize` does (the local pool as it goes,
// the coordinator from the records each worker ships back), and the timing starts once both workers are ready and
// the machine is quiet again after the warming batch. The two sides take turns going first in the repetitions.
// The CPU time per job of the whole process tree (this process, Redis, the workers, every evaluator) is printed
// beside, and by role: on 2 cores the rollouts already keep both busy, so each ms of CPU a job costs more shows as
// ~4 ms per slot.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { contentHash } from "../src/harness/files.ts";
import { BullmqRunner } from "../src/loop/distributed/bullmq.ts";
import { Recording, readRecordsFile } from "../src/loop/recording.ts";
import { DEFAULT_HARNESS } from "../src/loop/run.ts";
import { LocalRunner, type RolloutJob, type Runner } from "../src/loop/runner.ts";
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import { EvaluatorPool } from "../src/task/evaluator-pool.ts";
import { benchDir, fileCreateMs, honeCli, median, report, settle, spread } from "./lib.ts";
import { processTable } from "./proc-cpu.ts";

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 200);
const REPS = Number(process.env.BENCH_REPS ?? 4);
const AT_ONCE = 8;
/** Untimed jobs each rollout process runs before the repetitions (the local one, and each worker). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);

/**
 * CPU ms so far by role: this process (hone: the local runner or the coordinator, with its offline model thread),
 * Redis, the workers' own processes (each with its offline model thread), and the evaluator processes of every
 * warm pool (the rest of the tree: the local pool's sandboxes, and the workers' children).
 */
function cpuByRole(redis: number, workers: number[]): Record<"hone" | "redis" | "workers" | "evaluators", number> {
  const table = processTable();
  const tree = (pid: number): number => {
    const p = table.get(pid);
    if (!p) return 0;
    let sum = p.own + p.reaped;
    for (const [child, c] of table) if (c.parent === pid) sum += tree(child);
    return sum;
  };
  const own = (pid: number) => table.get(pid)?.own ?? 0;
  const all = tree(process.pid);
  const hone = own(process.pid);
  const redisCpu = tree(redis);
  const workersCpu = workers.reduce((a, w) => a + own(w), 0);
  const ms = (seconds: number) => seconds * 1000;
  return { hone: ms(hone), redis: ms(redisCpu), workers: ms(workersCpu), evaluators: ms(all - hone - redisCpu - workersCpu) };
}

type Role = keyof ReturnType<typeof cpuByRole>;
interface Timed {
  seconds: number;
  cpuPerJob: number;
  roles: Record<Role, number>;
}

/** Medians over the repetitions of the CPU per job of each role, in ms. */
const byRole = (timed: Timed[], roles: Role[]) =>
  `${roles.map((r) => median(timed.map((t) => t.roles[r])).toFixed(1)).join(" / ")} ms (medians)`;

/** Starts `hone worker` and resolves once it is ready; its output keeps being read so that it never blocks. */
function startWorker(url: string): Promise<ChildProcess> {
  const args = ["worker", "--queue", url, "--concurrency", "4", "--pool-size", "2"];
  const w = spawn(honeCli(), args, { stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve, reject) => {
    w.stdout?.on("data", (d) => / ready on /.test(String(d)) && resolve(w));
    w.once("exit", (code) => reject(new Error(`hone worker exited with ${code} before it was ready`)));
  });
}

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
  const dir = benchDir("queue");
  try {
    await new Promise((r) => setTimeout(r, 500));
    workers.push(...(await Promise.all([startWorker(url), startWorker(url)])));
    const pids = workers.map((w) => w.pid as number);
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
    // Runs `n` jobs tagged `tag` to their end; `collect` is what the coordinator does with each finished job besides
    // writing it (the queue: its records).
    type Collect = (outDir: string) => void;
    const drain = async (runner: Runner, tag: string, n: number, collect: Collect = () => {}) => {
      for await (const r of runner.run(jobs(tag, n))) {
        if (r.error) throw new Error(r.error);
        collect(join(dir, tag, r.id.slice(tag.length + 1)));
      }
    };
    const time = async (runner: Runner, tag: string, collect?: Collect) => {
      await drain(runner, `${tag}-warm`, AT_ONCE);
      if (!(await settle())) unsettled++;
      creates.push(fileCreateMs(dir));
      const cpu = cpuByRole(redis.pid as number, pids);
      const t = performance.now();
      await drain(runner, tag, ROLLOUTS, collect);
      const seconds = (performance.now() - t) / 1000;
      const after = cpuByRole(redis.pid as number, pids);
      const perJob = (role: keyof typeof cpu) => (after[role] - cpu[role]) / ROLLOUTS;
      const roles = {
        hone: perJob("hone"),
        workers: perJob("workers"),
        evaluators: perJob("evaluators"),
        redis: perJob("redis"),
      };
      await runner.close();
      return { seconds, cpuPerJob: roles.hone + roles.workers + roles.evaluators + roles.redis, roles };
    };
    // Timed sides that began before the machine was quiet (each waits up to 10 s for it, untimed).
    let unsettled = 0;
    // What a file creation costs as each timed side begins (each job writes its rollout's files, twice when queued).
    const creates: number[] = [];
    const taskHash = contentHash(task.dir);
    const pool = await EvaluatorPool.start(task, { size: 4 });
    // One run's records per side, kept across repetitions like the workers' models and pools.
    const localRun = new Recording(mkdtempSync(join(dir, "local-run-")), { cache: { mode: "off" } });
    const queuedRun = new Recording(mkdtempSync(join(dir, "queued-run-")), { cache: { mode: "off" } });
    const model = await localRun.model({ model: "offline" });
    const evaluate = localRun.evaluator((p) => pool.evaluate(p), taskHash);
    const local: Timed[] = [];
    const queued: Timed[] = [];
    const localRunner = () => new LocalRunner({ task, model: model.model, evaluate, concurrency: AT_ONCE });
    const queuedRunner = (key: string) =>
      new BullmqRunner({ url, runKey: `bench-${Date.now()}-${key}`, task, taskRef: task.dir, executor: { model: "offline" } });
    const importRecords: Collect = (outDir) => queuedRun.import(readRecordsFile(outDir));
    const timeLocal = (r: number) => time(localRunner(), `local-${r}`);
    const timeQueued = (r: number) => time(queuedRunner(String(r)), `queued-${r}`, importRecords);
    // Each rollout process first runs WARMUP jobs, untimed: a process's CPU per job falls over its first few hundred
    // jobs as V8 optimizes its code, and the local runner's process would otherwise be twice as warm as each worker
    // (it runs every local job; each worker half the queued ones).
    for (const [runner, tag, n, collect] of [
      [localRunner(), "local-warmup", WARMUP, undefined],
      [queuedRunner("warmup"), "queued-warmup", WARMUP * workers.length, importRecords],
    ] as const) {
      await drain(runner, tag, n, collect);
      await runner.close();
    }
    // The two sides take turns going first, so neither always inherits what the other (or the bench before) left.
    for (let r = 0; r < REPS; r++) {
      if (r % 2 === 0) {
        local.push(await timeLocal(r));
        queued.push(await timeQueued(r));
      } else {
        queued.push(await timeQueued(r));
        local.push(await timeLocal(r));
      }
    }
    pool.close();
    await model.close();
    localRun.close();
    queuedRun.close();
    const overhead = queued.map((q, i) => (((q.seconds - (local[i]?.seconds as number)) * AT_ONCE) / ROLLOUTS) * 1000);
    const [ls, qs] = [local.map((x) => x.seconds), queued.map((x) => x.seconds)];
    return report(
      `queue (issue 9): ${ROLLOUTS} rollouts, offline model, 1 circle-packing evaluation each, ${AT_ONCE} at a time; ${REPS} repetitions`,
      [
        ["local pool (concurrency 8, one pool of 4)", spread(ls, " s", 1)],
        ["two BullMQ workers (concurrency 4, a pool of 2 each)", spread(qs, " s", 1)],
        ["timed sides begun on a quiet machine (busy < 10% over 250 ms)", `${2 * REPS - unsettled} of ${2 * REPS}`],
        ["creating a file in the bench's folder as each timed side begins (not judged)", spread(creates, " ms", 3)],
        [
          "rollouts/s local / queued",
          `${(ROLLOUTS / (ls[0] as number)).toFixed(1)} / ${(ROLLOUTS / (qs[0] as number)).toFixed(1)} (first repetition)`,
        ],
        [
          "CPU per job, whole process tree: local",
          spread(
            local.map((x) => x.cpuPerJob),
            " ms",
            1,
          ),
        ],
        [
          "CPU per job, whole process tree: queued",
          spread(
            queued.map((x) => x.cpuPerJob),
            " ms",
            1,
          ),
        ],
        ["  of it, local: hone / evaluators", byRole(local, ["hone", "evaluators"])],
        [
          "  of it, queued: coordinator / workers / evaluators / Redis",
          byRole(queued, ["hone", "workers", "evaluators", "redis"]),
        ],
      ],
      [{ goal: { figure: "queue overhead per job", op: "<=", value: 5, unit: " ms" }, samples: overhead }],
    );
  } finally {
    for (const w of workers) w.kill("SIGKILL");
    redis.kill("SIGKILL");
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchQueue();
