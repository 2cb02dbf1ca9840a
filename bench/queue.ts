// Throughput of 200 short rollouts (offline model, circle packing, 1 evaluation each) on the local pool and through
// BullMQ, side by side in each repetition, and the queue's overhead per job. The judged queued side is one `hone
// worker` of the local pool's shape (concurrency 8, a pool of 4), so that the two sides differ by the queue alone: the
// jobs' round trips through Redis, the coordinator writing each rollout's folder and importing its records, Redis.
// Printed beside it, not judged: two workers on this machine (concurrency 4, a pool of 2 each), which adds a second
// hone process sharing the two cores; measured on 2026-12-06, two such processes cost each other 1-2 ms of CPU per
// job whether they are workers or not (bench/README.md). Each side's workers have a Redis database of their own, and the
// workers of the sides not being timed are stopped (SIGSTOP) meanwhile, so that no idle process runs beside the
// timed one. Each rollout process (the local one, each worker) first runs 600 untimed jobs, since a process's CPU
// per job falls over its first several hundred as V8 optimizes (a worker or the local runner alone, windows of 100
// jobs: 25-34 ms, then 13-16 ms by the sixth; after 300 untimed jobs, both sides' CPU per job still fell by a
// quarter over the next 800), and each timed side begins with an untimed batch of 8; every side runs 8
// rollouts at a time with 4 evaluator processes in all, and the overhead is per job slot: the wall-time difference
// times the 8 jobs at a time, divided by the jobs. Every side records each model call and evaluation into a run's
// hone.db as `hone optimize` does (the local pool as it goes, the coordinator from the records each worker ships
// back), and the timing starts once the machine is quiet again after the warming batch. The sides take turns going
// first in the repetitions. The CPU time per job of the whole process tree (this process, Redis, the workers, every
// evaluator) is printed beside, and by role: on 2 cores the rollouts already keep both busy, so each ms of CPU a job
// costs more shows as ~4 ms per slot. Then, printed beside and not judged, the local pool and the judged worker with
// the offline model slowed to 200 ms per call, as a real model is slow: 64 rollouts a side, and the queue's share of
// the run's time. Last, for scale, BullMQ alone: a sampled job of the judged side and its result through a bare BullMQ
// worker (bullmqAlone).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Job, Queue, QueueEvents } from "bullmq";
import { contentHash } from "../src/harness/files.ts";
import { BullmqRunner, type BullmqRunnerOptions } from "../src/loop/distributed/bullmq.ts";
import { packageDigest, packDir, toJobData } from "../src/loop/distributed/job-data.ts";
import { QUEUE_NAME } from "../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../src/loop/distributed/queue-connection.ts";
import { Recording, readRecordsFile } from "../src/loop/recording.ts";
import { DEFAULT_HARNESS } from "../src/loop/run.ts";
import { LocalRunner, type RolloutJob, type Runner } from "../src/loop/runner.ts";
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import { EvaluatorPool } from "../src/task/evaluator-pool.ts";
import { memoryRoot } from "../src/task/pool-dir.ts";
import { benchDir, fileCreateMs, honeCli, median, report, settle, spread } from "./lib.ts";
import { processTable } from "./proc-cpu.ts";

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 200);
const REPS = Number(process.env.BENCH_REPS ?? 4);
const AT_ONCE = 8;
/** Untimed jobs each rollout process runs before the repetitions (the local one, and each worker). */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 600);
/** The latency per model call of the pair printed beside (not judged): a slow model, as a real one is. */
const LATENCY_MS = 200;
const LATENCY_ROLLOUTS = Number(process.env.BENCH_LATENCY_ROLLOUTS ?? 64);

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

/**
 * Starts `hone worker` with its output (a line per job) going into `log`, as a worker's log goes to its own terminal or
 * journal: read by this process, which is the coordinator, it would cost the queued side a read per job that `hone
 * optimize --queue` does not make. Resolves once the log says the worker is ready.
 */
async function startWorker(url: string, concurrency: number, poolSize: number, log: string): Promise<ChildProcess> {
  const args = ["worker", "--queue", url, "--concurrency", String(concurrency), "--pool-size", String(poolSize)];
  const out = openSync(log, "w");
  const child = spawn(honeCli(), args, { stdio: ["ignore", out, out] });
  closeSync(out);
  while (!readFileSync(log, "utf8").includes(" ready on ")) {
    if (child.exitCode !== null) throw new Error(`hone worker exited with ${child.exitCode} before it was ready: ${log}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return child;
}

/** Resolves with `child` once its output says it is ready; its output keeps being read so that it never blocks. */
function ready(child: ChildProcess, line: RegExp): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => line.test(String(d)) && resolve(child));
    child.once("exit", (code) => reject(new Error(`${child.spawnargs.join(" ")} exited with ${code} before it was ready`)));
  });
}

/** A way to run the jobs: its runner, and the worker processes behind it (none for the local pool). */
interface Side {
  name: "local" | "one" | "two" | "local-slow" | "one-slow";
  runner: () => Runner;
  workers: ChildProcess[];
  /** What the coordinator does with each finished job besides writing it (the queue: looks for its records). */
  collect?: (outDir: string) => void;
  timed: Timed[];
}

/**
 * BullMQ alone, for scale: one real queued job's data added `n` times to a queue of its own, each answered at once
 * with that job's real result by a bare BullMQ worker in a process of its own (peers/bullmq-echo.ts), 8 at a time as
 * the sides run, after 500 untimed; added and awaited as BullMQ's own API does (add, then waitUntilFinished). The CPU
 * per job, in ms, of this process, the worker and Redis.
 */
async function bullmqAlone(url: string, redis: number, sample: Job, dir: string, n = 2000) {
  const name = "bench-bullmq-alone";
  const resultFile = join(dir, "sample-result.json");
  writeFileSync(resultFile, JSON.stringify(sample.returnvalue));
  const peer = join(import.meta.dirname, "peers", "bullmq-echo.ts");
  const worker = await ready(
    spawn(process.execPath, [...process.execArgv, peer, url, name, resultFile, String(AT_ONCE)], {
      stdio: ["ignore", "pipe", "inherit"],
    }),
    /^ready$/m,
  );
  const connection = connectionFrom(url);
  const queue = new Queue(name, { connection });
  const events = new QueueEvents(name, { connection, lastEventId: "0-0" });
  events.setMaxListeners(0);
  await events.waitUntilReady();
  const run = async (tag: string, jobs: number) => {
    let next = 0;
    const one = async () => {
      while (next < jobs) {
        const job = await queue.add(sample.name, sample.data, { jobId: `${tag}-${next++}`, removeOnComplete: false });
        await job.waitUntilFinished(events);
      }
    };
    await Promise.all(Array.from({ length: AT_ONCE }, one));
  };
  try {
    await run("warm", 500);
    const before = cpuByRole(redis, [worker.pid as number]);
    await run("timed", n);
    const after = cpuByRole(redis, [worker.pid as number]);
    const per = (k: keyof typeof before) => (after[k] - before[k]) / n;
    return { coordinator: per("hone"), worker: per("workers"), redis: per("redis") };
  } finally {
    worker.kill("SIGTERM");
    await events.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
}

/** Adds one job to the queue at `url`, kept once finished, and returns it finished (its data and its return value). */
async function finishedJob(url: string, name: string, data: object): Promise<Job> {
  const connection = connectionFrom(url);
  const queue = new Queue(QUEUE_NAME, { connection });
  const events = new QueueEvents(QUEUE_NAME, { connection });
  try {
    await events.waitUntilReady();
    const job = await queue.add(name, data, { jobId: `sample-${Date.now()}`, removeOnComplete: false });
    await job.waitUntilFinished(events, 60_000);
    const done = await queue.getJob(job.id as string);
    if (!done?.returnvalue) throw new Error("the judged worker returned nothing for the sampled job");
    return done;
  } finally {
    await events.close();
    await queue.close();
  }
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
  // A database per queued side: a side's jobs go only to its own workers.
  const url = (db: number) => `redis://127.0.0.1:${port}/${db}`;
  const workers: ChildProcess[] = [];
  // Both sides write the same files into their runs (6 per job: the rollout's folder, its programs/ folder and 4
  // files), in memory where the machine has a tmpfs for it: on this machine's disk a file's creation costs
  // 0.02-0.6 ms depending on what was removed in the minutes before, which swung each side's CPU per job by ~2 ms
  // between repetitions and the difference by ±6 ms per slot (bench/README.md).
  const dir = benchDir("queue", memoryRoot());
  try {
    await new Promise((r) => setTimeout(r, 500));
    const [one, ...two] = await Promise.all([
      startWorker(url(0), AT_ONCE, AT_ONCE / 2, join(dir, "worker-one.log")),
      startWorker(url(1), AT_ONCE / 2, AT_ONCE / 4, join(dir, "worker-two-a.log")),
      startWorker(url(1), AT_ONCE / 2, AT_ONCE / 4, join(dir, "worker-two-b.log")),
    ]);
    workers.push(one as ChildProcess, ...two);
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
    // Runs `n` jobs tagged `tag` to their end.
    const drain = async (side: Side, runner: Runner, tag: string, n: number) => {
      for await (const r of runner.run(jobs(tag, n))) {
        if (r.error) throw new Error(r.error);
        side.collect?.(join(dir, tag, r.id.slice(tag.length + 1)));
      }
    };
    const sides: Side[] = [];
    // Only the side being timed has its workers running.
    const only = (side: Side) => {
      for (const w of workers) w.kill(side.workers.includes(w) ? "SIGCONT" : "SIGSTOP");
    };
    const time = async (side: Side, r: number, n = ROLLOUTS) => {
      only(side);
      const runner = side.runner();
      const tag = `${side.name}-${r}`;
      await drain(side, runner, `${tag}-warm`, AT_ONCE);
      timedSides++;
      if (!(await settle())) unsettled++;
      creates.push(fileCreateMs(dir));
      const pids = side.workers.map((w) => w.pid as number);
      const cpu = cpuByRole(redis.pid as number, pids);
      const t = performance.now();
      await drain(side, runner, tag, n);
      const seconds = (performance.now() - t) / 1000;
      const after = cpuByRole(redis.pid as number, pids);
      const perJob = (role: keyof typeof cpu) => (after[role] - cpu[role]) / n;
      const roles = {
        hone: perJob("hone"),
        workers: perJob("workers"),
        evaluators: perJob("evaluators"),
        redis: perJob("redis"),
      };
      await runner.close();
      side.timed.push({ seconds, cpuPerJob: roles.hone + roles.workers + roles.evaluators + roles.redis, roles });
    };
    // Timed sides that began before the machine was quiet (each waits up to 10 s for it, untimed).
    let unsettled = 0;
    let timedSides = 0;
    // What a file creation costs as each timed side begins (each job writes its rollout's files).
    const creates: number[] = [];
    const taskHash = contentHash(task.dir);
    const pool = await EvaluatorPool.start(task, { size: AT_ONCE / 2 });
    // One run's records per side, kept across repetitions like the workers' models and pools.
    const run = (name: string) => new Recording(mkdtempSync(join(dir, `${name}-run-`)), { cache: { mode: "off" } });
    const [localRun, oneRun, twoRun] = [run("local"), run("one"), run("two")];
    const model = await localRun.model({ model: "offline" });
    const evaluate = localRun.evaluator((p) => pool.evaluate(p), taskHash);
    // As `hone optimize --queue` does: each job's records go into the run before its folder appears, then the
    // folder is looked at for records a Slurm job would have left there (remoteRunner, optimize-rounds' record()).
    const queued =
      (db: number, records: Recording, executor: BullmqRunnerOptions["executor"] = { model: "offline" }) =>
      () =>
        new BullmqRunner({
          url: url(db),
          runKey: `bench-${Date.now()}`,
          task,
          taskRef: task.dir,
          executor,
          importRecords: (shipped) => records.import(shipped),
        });
    const lookForRecords = (records: Recording) => (outDir: string) => records.import(readRecordsFile(outDir));
    sides.push(
      {
        name: "local",
        runner: () => new LocalRunner({ task, model: model.model, evaluate, concurrency: AT_ONCE }),
        workers: [],
        timed: [],
      },
      { name: "one", runner: queued(0, oneRun), workers: [one as ChildProcess], collect: lookForRecords(oneRun), timed: [] },
      { name: "two", runner: queued(1, twoRun), workers: two, collect: lookForRecords(twoRun), timed: [] },
    );
    // Each rollout process first runs WARMUP jobs, untimed: a process's CPU per job falls over its first few hundred
    // jobs as V8 optimizes its code.
    for (const side of sides) {
      only(side);
      const runner = side.runner();
      await drain(side, runner, `${side.name}-warmup`, WARMUP * Math.max(1, side.workers.length));
      await runner.close();
    }
    // The sides take turns going first, so none always inherits what another (or the bench before) left.
    for (let r = 0; r < REPS; r++) for (let k = 0; k < sides.length; k++) await time(sides[(r + k) % sides.length] as Side, r);
    // Beside, not judged: the local pool and the judged worker with a model as slow as a real one, for what the queue
    // costs a run of such rollouts. The cores are idle for most of each rollout; but its 8 rollouts call the model in
    // step (each call takes the same time), so their CPU still meets at the end of each call, and the queue's CPU per
    // job still shows there.
    const slowModel = await localRun.model({ model: "offline", offlineLatencyMs: LATENCY_MS });
    const slow: Side[] = [
      {
        name: "local-slow",
        runner: () => new LocalRunner({ task, model: slowModel.model, evaluate, concurrency: AT_ONCE }),
        workers: [],
        timed: [],
      },
      {
        name: "one-slow",
        runner: queued(0, oneRun, { model: "offline", offlineLatencyMs: LATENCY_MS }),
        workers: [one as ChildProcess],
        collect: lookForRecords(oneRun),
        timed: [],
      },
    ];
    for (let r = 0; r < REPS; r++) for (let k = 0; k < 2; k++) await time(slow[(r + k) % 2] as Side, r, LATENCY_ROLLOUTS);
    await slowModel.close();
    // One job of the judged side as it goes through Redis (its data as BullmqRunner adds it, its result as the judged
    // worker returns it), for BullMQ alone; then every hone worker is stopped. The coordinator removes the jobs whose
    // results it took, so this one is added here and kept.
    only(sides[1] as Side);
    const [sampled] = jobs("sample", 1) as [RolloutJob];
    const harness = { digest: packageDigest(packDir(DEFAULT_HARNESS)) };
    const data = toJobData(sampled, {
      runKey: "bench-sample",
      taskRef: task.dir,
      taskHash,
      executor: { model: "offline" },
      harness,
    });
    const sample = await finishedJob(url(0), sampled.id, { ...data, recordsBeside: true });
    only(sides[0] as Side);
    const alone = await bullmqAlone(url(2), redis.pid as number, sample, dir);
    for (const w of workers) w.kill("SIGCONT");
    pool.close();
    await model.close();
    for (const x of [localRun, oneRun, twoRun]) x.close();
    const [local, oneSide, twoSide] = sides.map((x) => x.timed) as [Timed[], Timed[], Timed[]];
    const overhead = (q: Timed[], base = local, n = ROLLOUTS) =>
      q.map((x, i) => (((x.seconds - (base[i]?.seconds as number)) * AT_ONCE) / n) * 1000);
    const [localSlow, oneSlow] = slow.map((x) => x.timed) as [Timed[], Timed[]];
    const seconds = (t: Timed[]) => t.map((x) => x.seconds);
    const kb = (text: string) => `${(text.length / 1024).toFixed(1)} KB`;
    const cpu = (t: Timed[]) =>
      spread(
        t.map((x) => x.cpuPerJob),
        " ms",
        1,
      );
    const first = (t: Timed[]) => (ROLLOUTS / (t[0]?.seconds as number)).toFixed(1);
    return report(
      `queue (issue 9): ${ROLLOUTS} rollouts, offline model, 1 circle-packing evaluation each, ${AT_ONCE} at a time; ${REPS} repetitions`,
      [
        ["local pool (concurrency 8, one pool of 4)", spread(seconds(local), " s", 1)],
        ["one BullMQ worker of the same shape (concurrency 8, a pool of 4)", spread(seconds(oneSide), " s", 1)],
        ["two BullMQ workers (concurrency 4, a pool of 2 each)", spread(seconds(twoSide), " s", 1)],
        ["timed sides begun on a quiet machine (busy < 10% over 250 ms)", `${timedSides - unsettled} of ${timedSides}`],
        ["creating a file in the bench's folder as each timed side begins (not judged)", spread(creates, " ms", 3)],
        ["rollouts/s local / one worker / two", `${first(local)} / ${first(oneSide)} / ${first(twoSide)} (first repetition)`],
        ["CPU per job, whole process tree: local", cpu(local)],
        ["CPU per job, whole process tree: one worker", cpu(oneSide)],
        ["CPU per job, whole process tree: two workers", cpu(twoSide)],
        ["  of it, local: hone / evaluators", byRole(local, ["hone", "evaluators"])],
        [
          "  of it, one worker: coordinator / worker / evaluators / Redis",
          byRole(oneSide, ["hone", "workers", "evaluators", "redis"]),
        ],
        [
          "  of it, two workers: coordinator / workers / evaluators / Redis",
          byRole(twoSide, ["hone", "workers", "evaluators", "redis"]),
        ],
        [
          "two workers' overhead per job slot (not judged: a second hone process on 2 cores)",
          spread(overhead(twoSide), " ms", 1),
        ],
        [
          `with a model of +${LATENCY_MS} ms per call, ${LATENCY_ROLLOUTS} rollouts (not judged): local / one worker`,
          `${spread(seconds(localSlow), " s", 2)} / ${spread(seconds(oneSlow), " s", 2)}`,
        ],
        [
          "  CPU per job, whole process tree: local / one worker",
          `${median(localSlow.map((x) => x.cpuPerJob)).toFixed(1)} / ${median(oneSlow.map((x) => x.cpuPerJob)).toFixed(1)} ms (medians)`,
        ],
        [
          "  the queue's overhead per job slot with that model (not judged)",
          spread(overhead(oneSlow, localSlow, LATENCY_ROLLOUTS), " ms", 1),
        ],
        [
          "  the queue's share of the run's time with that model (not judged)",
          spread(
            oneSlow.map((x, i) => (x.seconds / (localSlow[i]?.seconds as number) - 1) * 100),
            " %",
            2,
          ),
        ],
        [
          `BullMQ alone, one sampled job (${kb(JSON.stringify(sample.data))} in, ${kb(JSON.stringify(sample.returnvalue))} back), CPU per job: coordinator / worker / Redis`,
          `${alone.coordinator.toFixed(2)} / ${alone.worker.toFixed(2)} / ${alone.redis.toFixed(2)} ms (2000 jobs)`,
        ],
      ],
      [{ goal: { figure: "queue overhead per job (one worker)", op: "<=", value: 5, unit: " ms" }, samples: overhead(oneSide) }],
    );
  } finally {
    for (const w of workers) w.kill("SIGKILL");
    redis.kill("SIGKILL");
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchQueue();
