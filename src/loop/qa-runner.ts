import { type ModelSettings, type ResolvedModel, resolveModel } from "../model/resolve.ts";
import type { ChatModel } from "../model/types.ts";
import { JsonlTrajectory, MemoryTrajectory, type TrajectoryEvent } from "../store/trajectory.ts";
import type { QATask } from "../task/qa/benchmarks.ts";
import { solveTask, type TaskResult } from "./qa-task.ts";
import { HarnessCache, type Runner, runPool } from "./runner.ts";

/** One QA task on one harness: what `hone eval` and `hone train` hand to a runner. Nothing secret. */
export interface QAJob {
  id: string;
  harnessDir: string;
  benchmark: string;
  task: QATask;
  seed: number;
  /** Where the task's trajectory goes (JSONL); none keeps it in memory only. */
  trajectoryPath?: string;
}

export interface QAJobResult {
  id: string;
  result: TaskResult;
  /** The trajectory's events, when the job ran elsewhere and its trajectory came back with it. */
  events?: TrajectoryEvent[];
}

export type QARunner = Runner<QAJob, QAJobResult>;

/** Runs one QA job in this process; a failure becomes a failed task result, never a score. */
export async function runQAJob(
  job: QAJob,
  model: ChatModel,
  harnesses: HarnessCache,
  keepEvents = false,
  userModel?: ChatModel,
): Promise<QAJobResult> {
  const trajectory = job.trajectoryPath ? new JsonlTrajectory(job.trajectoryPath) : new MemoryTrajectory();
  try {
    const harness = harnesses.get(job.harnessDir);
    const result = await solveTask(harness, model, job.benchmark, job.task, job.seed, trajectory, userModel);
    return { id: job.id, result, events: keepEvents && trajectory instanceof MemoryTrajectory ? trajectory.events : undefined };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return {
      id: job.id,
      result: { id: job.task.id, status: "failed", correct: false, score: 0, error, modelCalls: 0, tokens: 0 },
    };
  } finally {
    if (trajectory instanceof JsonlTrajectory) trajectory.close();
  }
}

/** The local pool for QA jobs: the model is resolved once, on the first job, and closed with the runner. */
export class LocalQARunner implements QARunner {
  private readonly harnesses = new HarnessCache();
  private resolved?: Promise<ResolvedModel>;
  private resolvedUser?: Promise<ResolvedModel>;

  /** `userModel`: the simulated user of conversation benchmarks (τ-bench); the executor's model when not given. */
  constructor(private readonly o: { model: ModelSettings; concurrency: number; userModel?: ModelSettings }) {}

  private model(): Promise<ResolvedModel> {
    this.resolved ??= resolveModel(this.o.model);
    return this.resolved;
  }

  private userModel(): Promise<ResolvedModel> | undefined {
    if (this.o.userModel) this.resolvedUser ??= resolveModel(this.o.userModel);
    return this.resolvedUser;
  }

  async *run(jobs: QAJob[]): AsyncIterable<QAJobResult> {
    // Resolved before any job starts, so an unreachable endpoint fails once, with its own error.
    const { model } = await this.model();
    const user = (await this.userModel())?.model;
    yield* runPool(jobs, this.o.concurrency, (job) => runQAJob(job, model, this.harnesses, false, user));
  }

  async close(): Promise<void> {
    for (const r of [this.resolved, this.resolvedUser]) if (r) await (await r.catch(() => undefined))?.close();
  }
}
