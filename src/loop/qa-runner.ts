import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { forScope } from "../model/cache.ts";
import { type ModelSettings, type ResolvedModel, resolveModel } from "../model/resolve.ts";
import type { ChatModel } from "../model/types.ts";
import { JsonlTrajectory, MemoryTrajectory, type TrajectoryEvent } from "../store/trajectory.ts";
import type { QATask } from "../task/qa/benchmarks.ts";
import { solveTask, type TaskResult } from "./qa-task.ts";
import type { Recording, ShippedRecords } from "./recording.ts";
import { HarnessCache, type Runner, runPool } from "./runner.ts";

/** One QA task on one harness: what `hone eval` and `hone train` hand to a runner. Nothing secret. */
export interface QAJob {
  /** Carries everything that identifies the work (qaJobId): benchmark, task, harness content, seed, repeat. */
  id: string;
  harnessDir: string;
  benchmark: string;
  task: QATask;
  seed: number;
  /** Which repeat of the same work this is (0 for the first). */
  repeat?: number;
  /** Where the task's trajectory goes (JSONL); none keeps it in memory only. */
  trajectoryPath?: string;
}

export interface QAJobResult {
  id: string;
  result: TaskResult;
  /** The trajectory's events (model calls with tokens and latency among them). */
  events?: TrajectoryEvent[];
  /** Model responses recorded where the job ran (a worker), for the coordinator's records. */
  records?: ShippedRecords;
}

export type QARunner = Runner<QAJob, QAJobResult>;

/**
 * The id of a QA job: benchmark, task, harness content hash, seed and repeat, so two jobs differing in any of them
 * are two executions wherever they run (a queue never hands one job's result to another).
 */
export function qaJobId(o: { benchmark: string; task: QATask; contentHash: string; seed: number; repeat?: number }): string {
  const task = createHash("sha256").update(`${o.task.id}\0${o.task.question}\0${o.task.gold}`).digest("hex");
  const safeId = o.task.id.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 60);
  return `qa-${o.benchmark}-${safeId}-t${task.slice(0, 8)}-h${o.contentHash.slice(0, 16)}-s${o.seed}-r${o.repeat ?? 0}`;
}

/** Runs one QA job in this process; a failure becomes a failed task result, never a score. */
export async function runQAJob(
  job: QAJob,
  model: ChatModel,
  harnesses: HarnessCache,
  userModel?: ChatModel,
): Promise<QAJobResult> {
  const memory = new MemoryTrajectory();
  if (job.trajectoryPath) rmSync(job.trajectoryPath, { force: true });
  const file = job.trajectoryPath ? new JsonlTrajectory(job.trajectoryPath) : undefined;
  const trajectory = {
    write: (e: TrajectoryEvent) => {
      file?.write(e);
      memory.write(e);
    },
  };
  try {
    // The job's own scope: the n-th identical request of this job is its own record (exact replay); the simulated
    // user's calls too, in a scope of their own.
    const scoped = forScope(model, job.id);
    const user = userModel ? forScope(userModel, `${job.id}-user`) : undefined;
    const result = await solveTask(harnesses.get(job.harnessDir), scoped, job.benchmark, job.task, job.seed, trajectory, user);
    return { id: job.id, result, events: memory.events };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return {
      id: job.id,
      result: { id: job.task.id, status: "failed", correct: false, score: 0, error, modelCalls: 0, tokens: 0 },
      events: memory.events,
    };
  } finally {
    file?.close();
  }
}

/**
 * The local pool for QA jobs: the model is resolved once, on the first job (through the run's recording when
 * given: cached, recorded, or replayed), and closed with the runner.
 */
export class LocalQARunner implements QARunner {
  private readonly harnesses = new HarnessCache();
  private resolved?: Promise<ResolvedModel>;
  private resolvedUser?: Promise<ResolvedModel>;

  /** `userModel`: the simulated user of conversation benchmarks (τ-bench); the executor's model when not given. */
  constructor(
    private readonly o: { model: ModelSettings; concurrency: number; recording?: Recording; userModel?: ModelSettings },
  ) {}

  private resolve(m: ModelSettings): Promise<ResolvedModel> {
    return this.o.recording ? this.o.recording.model(m) : resolveModel(m);
  }

  private model(): Promise<ResolvedModel> {
    this.resolved ??= this.resolve(this.o.model);
    return this.resolved;
  }

  private userModel(): Promise<ResolvedModel> | undefined {
    if (this.o.userModel) this.resolvedUser ??= this.resolve(this.o.userModel);
    return this.resolvedUser;
  }

  async *run(jobs: QAJob[]): AsyncIterable<QAJobResult> {
    // Resolved before any job starts, so an unreachable endpoint fails once, with its own error.
    const { model } = await this.model();
    const user = (await this.userModel())?.model;
    yield* runPool(jobs, this.o.concurrency, (job) => runQAJob(job, model, this.harnesses, user));
  }

  async close(): Promise<void> {
    for (const r of [this.resolved, this.resolvedUser]) if (r) await (await r.catch(() => undefined))?.close();
  }
}
