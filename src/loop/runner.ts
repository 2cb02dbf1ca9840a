import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadHarness } from "../harness/package.ts";
import type { Harness } from "../harness/types.ts";
import { forScope } from "../model/cache.ts";
import type { ChatModel } from "../model/types.ts";
import { type RolloutOutcome, runRollout, writeResult } from "../runtime/rollout.ts";
import { gateGeneratedCode } from "../sandbox/check.ts";
import { generatedCodeHost } from "../sandbox/generated-code.ts";
import { taskInputs } from "../sandbox/tool-host.ts";
import { folderFiles, MemoryFiles, type RolloutFiles } from "../store/rollout-files.ts";
import { JsonlText, JsonlTrajectory, type TrajectorySink } from "../store/trajectory.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { evaluateIn } from "../task/recorded-evaluations.ts";

/** One rollout to run: everything needed, nothing secret. Serializable, so distributed runners can ship it. */
export interface RolloutJob {
  id: string;
  harnessDir: string;
  startProgram: string;
  startEvaluation: Evaluation;
  seed: number;
  maxEvals: number;
  /** Where the rollout's artifacts go; it appears only when the rollout has finished. */
  outDir: string;
}

export interface RolloutJobResult {
  id: string;
  outcome?: RolloutOutcome;
  error?: string;
}

/**
 * Jobs in, results out as they finish. The local pool is the default; BullMQ and Slurm sit behind the same contract.
 * Rollouts on discovery tasks (optimize) and QA tasks (eval, train) are the two kinds of job.
 */
export interface Runner<J extends { id: string } = RolloutJob, R extends { id: string } = RolloutJobResult> {
  run(jobs: J[]): AsyncIterable<R>;
  close(): Promise<void>;
}

/** Up to `concurrency` jobs at once, results yielded as each finishes. */
export async function* runPool<J extends { id: string }, R extends { id: string }>(
  jobs: J[],
  concurrency: number,
  execute: (job: J) => Promise<R>,
): AsyncIterable<R> {
  const queue = [...jobs];
  const running = new Map<string, Promise<R>>();
  const start = () => {
    while (running.size < Math.max(1, concurrency) && queue.length > 0) {
      const job = queue.shift() as J;
      running.set(job.id, execute(job));
    }
  };
  start();
  while (running.size > 0) {
    const done = await Promise.race(running.values());
    running.delete(done.id);
    start();
    yield done;
  }
}

/**
 * Every promise's value, yielded in the order they settle (a rejection is thrown where it falls in that order). Each
 * promise is listened to once: racing all that are left after every settlement would cost O(n²) reactions for n jobs.
 */
export async function* asCompleted<R>(pending: Promise<R>[]): AsyncIterable<R> {
  const settled: PromiseSettledResult<R>[] = [];
  let wake: (() => void) | undefined;
  for (const p of pending)
    p.then(
      (value) => settled.push({ status: "fulfilled", value }),
      (reason: unknown) => settled.push({ status: "rejected", reason }),
    ).finally(() => wake?.());
  for (let yielded = 0; yielded < pending.length; yielded++) {
    if (settled.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    const next = settled.shift() as PromiseSettledResult<R>;
    if (next.status === "rejected") throw next.reason;
    yield next.value;
  }
}

export interface LocalRunnerOptions {
  task: DiscoveryTask;
  model: ChatModel;
  evaluate: (program: string) => Promise<Evaluation>;
  concurrency: number;
  timeLimitSec?: number;
  onEvent?: (jobId: string, event: Record<string, unknown>) => void;
}

/** Loads and gates a package once per directory: package directories do not change while a run uses them. */
export class HarnessCache {
  private readonly loaded = new Map<string, Harness>();
  get(dir: string): Harness {
    let h = this.loaded.get(dir);
    if (!h) {
      h = loadHarness(dir, { generatedCode: gateGeneratedCode });
      this.loaded.set(dir, h);
    }
    return h;
  }
  /** Drops a package whose folder is going away. */
  forget(dir: string): void {
    this.loaded.delete(dir);
  }
}

/** Runs one job's rollout in this process, its files and trajectory written where the caller says. */
async function rollOut(
  job: Omit<RolloutJob, "outDir">,
  o: Omit<LocalRunnerOptions, "concurrency">,
  cache: HarnessCache,
  files: RolloutFiles,
  trajectory: TrajectorySink,
): Promise<RolloutOutcome> {
  const harness = cache.get(job.harnessDir);
  const task = o.task;
  // Each rollout counts its own occurrences of identical requests and evaluations (exact replay).
  const outcome = await runRollout({
    harness,
    task,
    model: forScope(o.model, job.id),
    evaluate: evaluateIn(o.evaluate, job.id),
    maxEvals: job.maxEvals,
    seed: job.seed,
    trajectory: {
      write: (e) => {
        trajectory.write(e);
        o.onEvent?.(job.id, e);
      },
    },
    files,
    startProgram: job.startProgram,
    startEvaluation: job.startEvaluation,
    timeLimitSec: o.timeLimitSec,
    generatedCode: (env, t) => generatedCodeHost(harness.tools, env, taskInputs(task), t, { seed: job.seed, python: { task } }),
  });
  writeResult(files, { job: job.id, seed: job.seed, ...outcome, bestProgram: undefined });
  return outcome;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Runs one job in this process: load and gate the package, roll out, write its files under a .partial name, renamed
 * to `job.outDir` once whole. The trajectory is appended as it happens, so a killed rollout keeps it up to the kill.
 * `finish` writes more files into the folder before it appears (a Slurm job's records).
 */
export async function runJob(
  job: RolloutJob,
  o: Omit<LocalRunnerOptions, "concurrency">,
  cache = new HarnessCache(),
  finish?: (files: RolloutFiles) => void,
): Promise<RolloutJobResult> {
  const partial = `${job.outDir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const jsonl = new JsonlTrajectory(join(partial, "trajectory.jsonl"));
  try {
    const files = folderFiles(partial);
    const outcome = await rollOut(job, o, cache, files, jsonl);
    jsonl.close();
    finish?.(files);
    rmSync(job.outDir, { recursive: true, force: true });
    mkdirSync(dirname(job.outDir), { recursive: true });
    renameSync(partial, job.outDir);
    return { id: job.id, outcome };
  } catch (err) {
    jsonl.close();
    return { id: job.id, error: message(err) };
  }
}

/**
 * Runs one job in this process with its files kept in memory (the folder `runJob` would leave, by path), for a
 * worker that ships them back: nothing is written here, read back and removed.
 */
export async function runJobInMemory(
  job: Omit<RolloutJob, "outDir">,
  o: Omit<LocalRunnerOptions, "concurrency">,
  cache = new HarnessCache(),
): Promise<RolloutJobResult & { files: Record<string, string> }> {
  const files = new MemoryFiles();
  const trajectory = new JsonlText();
  try {
    const outcome = await rollOut(job, o, cache, files, trajectory);
    files.write("trajectory.jsonl", trajectory.text());
    return { id: job.id, outcome, files: files.files };
  } catch (err) {
    return { id: job.id, error: message(err), files: {} };
  }
}

/** The local pool: up to `concurrency` rollouts at once in this process, results yielded as each finishes. */
export class LocalRunner implements Runner {
  private readonly cache = new HarnessCache();
  constructor(private readonly o: LocalRunnerOptions) {}

  run(jobs: RolloutJob[]): AsyncIterable<RolloutJobResult> {
    return runPool(jobs, this.o.concurrency, (job) => runJob(job, this.o, this.cache));
  }

  async close(): Promise<void> {}
}

export const jobFinished = (outDir: string) => existsSync(join(outDir, "result.json"));
