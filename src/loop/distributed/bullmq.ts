import { writeFileSync } from "node:fs";
import { isRecord } from "../../harness/formats/package-reader.ts";
import type { ModelSettings } from "../../model/resolve.ts";
import { taskContentHash } from "../../task/content-hash.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import type { QAJob, QAJobResult, QARunner } from "../qa-runner.ts";
import { type ShippedRecords, withRecordsFile } from "../recording.ts";
import { asCompleted, type RolloutJob, type RolloutJobResult, type Runner } from "../runner.ts";
import {
  honeBuild,
  type JobHarness,
  outcomeFromFiles,
  placeRollout,
  publicSettings,
  type QAJobData,
  type QAJobReturn,
  type RolloutJobReturn,
  toJobData,
} from "./job-data.ts";
import { JobQueue } from "./job-queue.ts";

const failed = (v: unknown): v is { failed: string } => typeof (v as { failed?: unknown } | null)?.failed === "string";

/** Whether a worker's return value has a QA task result's shape: a result, its trajectory's events, records if any. */
const isQAReturn = (v: unknown): v is QAJobReturn =>
  isRecord(v) && isRecord(v.result) && Array.isArray(v.events) && (v.records === undefined || isRecord(v.records));

/** Whether a worker's return value has a rollout result's shape: files as texts by path, records an object if any. */
function isRolloutReturn(v: unknown): v is RolloutJobReturn {
  if (!isRecord(v) || !isRecord(v.files) || (v.records !== undefined && !isRecord(v.records))) return false;
  if (v.error !== undefined && typeof v.error !== "string") return false;
  return Object.values(v.files).every((text) => typeof text === "string");
}

export interface BullmqRunnerOptions {
  url: string;
  /** Identifies the run: a job id is `${runKey}--${jobId}`, so a restarted coordinator finds its finished jobs. */
  runKey: string;
  task: DiscoveryTask;
  taskRef: string;
  tasksDir?: string;
  executor: Partial<ModelSettings> & { model: string };
  timeLimitSec?: number;
  /** Attempts before a job counts as failed (a worker dying mid-job costs one). */
  attempts?: number;
  /**
   * Takes the records each job shipped back (its model responses and evaluations: the run's Recording), before the
   * job's folder appears, so a folder on disk always has its records in the run, as a local rollout's has. Without
   * it they are written into the folder as records.json, for the caller to import (`readRecordsFile`).
   */
  importRecords?: (records: ShippedRecords) => void;
}

/**
 * The coordinator side: each rollout is a BullMQ job; workers (`hone worker`) run it and return its files, which
 * are written into the run directory here. Job ids are deterministic, so a coordinator restarted with --resume
 * picks up jobs that finished meanwhile without running them again.
 */
export class BullmqRunner implements Runner {
  private readonly jobs: JobQueue;
  private readonly taskHash: string;

  constructor(private readonly o: BullmqRunnerOptions) {
    this.jobs = new JobQueue(o.url);
    this.taskHash = taskContentHash(o.task);
  }

  async *run(jobs: RolloutJob[]): AsyncIterable<RolloutJobResult> {
    await this.jobs.ready();
    const named = this.jobs.batch();
    const pending = jobs.map(async (job): Promise<RolloutJobResult> => {
      const harness = await named(job.harnessDir);
      if (failed(harness)) return { id: job.id, error: harness.failed };
      const data = toJobData(job, {
        runKey: this.o.runKey,
        taskRef: this.o.taskRef,
        tasksDir: this.o.tasksDir,
        taskHash: this.taskHash,
        executor: this.o.executor,
        timeLimitSec: this.o.timeLimitSec,
        harness,
      });
      const take = (value: unknown) => this.take(job, value);
      const attempts = this.o.attempts ?? 3;
      try {
        const result = await this.jobs.submit(this.o.runKey, job.id, { ...data, recordsBeside: true }, { attempts, take });
        return failed(result) ? { id: job.id, error: result.failed } : result;
      } catch (err) {
        return { id: job.id, error: (err as Error).message };
      }
    });
    yield* asCompleted(pending);
  }

  /**
   * What a job returned, taken into the run: its records (or beside its files), then its folder; what a worker sent
   * can be anything. A rollout that cannot be placed throws, so that its result stays in the queue for a resumed run.
   */
  private take(job: RolloutJob, value: unknown): RolloutJobResult {
    if (failed(value)) return { id: job.id, error: value.failed };
    if (!isRolloutReturn(value))
      return { id: job.id, error: `the queue job for ${job.id} returned something that is not a rollout's result` };
    if (value.error) return { id: job.id, error: value.error };
    try {
      this.place(value, job.outDir);
    } catch (err) {
      throw new Error(`the rollout ${job.id} that came back could not be taken into ${job.outDir}: ${(err as Error).message}`);
    }
    const best = value.files[`best_program${this.o.task.programExtension}`];
    return { id: job.id, outcome: outcomeFromFiles(value.files["result.json"], best) };
  }

  /** The job's records into the run (or beside its files), then its folder. */
  private place(value: RolloutJobReturn, outDir: string): void {
    const { files, records } = value;
    if (records && this.o.importRecords) this.o.importRecords(records);
    placeRollout(this.o.importRecords ? files : withRecordsFile(files, records), outDir);
  }

  close(): Promise<void> {
    return this.jobs.close();
  }
}

/** QA tasks (hone eval, hone train) on BullMQ workers; trajectories come back with the results and are written here. */
export class BullmqQARunner implements QARunner {
  private readonly jobs: JobQueue;

  constructor(
    private readonly o: { url: string; runKey: string; executor: Partial<ModelSettings> & { model: string }; attempts?: number },
  ) {
    this.jobs = new JobQueue(o.url);
  }

  async *run(jobs: QAJob[]): AsyncIterable<QAJobResult> {
    await this.jobs.ready();
    const named = this.jobs.batch();
    const pending = jobs.map(async (job): Promise<QAJobResult> => {
      const harness = await named(job.harnessDir);
      const data = (h: JobHarness): QAJobData => ({
        kind: "qa",
        runKey: this.o.runKey,
        jobId: job.id,
        harness: h,
        benchmark: job.benchmark,
        task: job.task,
        seed: job.seed,
        repeat: job.repeat,
        executor: publicSettings(this.o.executor),
        hone: honeBuild(),
      });
      const value = failed(harness)
        ? harness
        : // Kept in Redis: a QA task's result reaches the run's records only later (hone compare's repeats collect
          // them again from the queue after a restart).
          await this.jobs.submit<unknown>(this.o.runKey, job.id, data(harness), { attempts: this.o.attempts ?? 3, keep: true });
      if (!isQAReturn(value)) {
        const error = failed(value)
          ? value.failed
          : `the queue job for ${job.id} returned something that is not a QA task's result`;
        return {
          id: job.id,
          result: { id: job.task.id, status: "failed", correct: false, score: 0, error, modelCalls: 0, tokens: 0 },
        };
      }
      if (job.trajectoryPath) writeFileSync(job.trajectoryPath, value.events.map((e) => `${JSON.stringify(e)}\n`).join(""));
      return { id: job.id, result: value.result, events: value.events, records: value.records };
    });
    yield* asCompleted(pending);
  }

  close(): Promise<void> {
    return this.jobs.close();
  }
}
