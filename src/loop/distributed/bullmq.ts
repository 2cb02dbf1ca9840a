import { mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Queue, QueueEvents, Worker } from "bullmq";
import { HoneError } from "../../errors.ts";
import { contentHash } from "../../harness/files.ts";
import type { ModelSettings } from "../../model/resolve.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import type { RolloutJob, RolloutJobResult, Runner } from "../runner.ts";
import { executeJobData, WorkerCaches } from "./execute.ts";
import { packDir, type RolloutJobData, type RolloutJobReturn, toJobData, unpackDir } from "./job-data.ts";

export const QUEUE_NAME = "hone-rollouts";

export function connectionFrom(url: string): {
  host: string;
  port: number;
  password?: string;
  db?: number;
  maxRetriesPerRequest: null;
} {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new HoneError("usage", `--queue takes a Redis URL like redis://127.0.0.1:6379, not "${url}"`);
  }
  if (u.protocol !== "redis:") throw new HoneError("usage", `--queue takes a redis:// URL, not ${u.protocol}`);
  return {
    host: u.hostname || "127.0.0.1",
    port: Number(u.port || 6379),
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined,
    maxRetriesPerRequest: null,
  };
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
}

/**
 * The coordinator side: each rollout is a BullMQ job; workers (`hone worker`) run it and return its files, which
 * are written into the run directory here. Job ids are deterministic, so a coordinator restarted with --resume
 * picks up jobs that finished meanwhile without running them again.
 */
export class BullmqRunner implements Runner {
  private readonly queue: Queue;
  private readonly events: QueueEvents;
  private readonly taskHash: string;

  constructor(private readonly o: BullmqRunnerOptions) {
    const connection = connectionFrom(o.url);
    this.queue = new Queue(QUEUE_NAME, { connection });
    this.events = new QueueEvents(QUEUE_NAME, { connection });
    // One waiter per job in flight listens on these emitters.
    this.queue.setMaxListeners(0);
    this.events.setMaxListeners(0);
    this.taskHash = contentHash(o.task.dir);
  }

  async *run(jobs: RolloutJob[]): AsyncIterable<RolloutJobResult> {
    await this.events.waitUntilReady();
    const pending = jobs.map(async (job): Promise<RolloutJobResult> => {
      const data = toJobData(job, {
        runKey: this.o.runKey,
        taskRef: this.o.taskRef,
        tasksDir: this.o.tasksDir,
        taskHash: this.taskHash,
        executor: this.o.executor,
        timeLimitSec: this.o.timeLimitSec,
      });
      const id = `${this.o.runKey}--${job.id}`.replace(/[^A-Za-z0-9_.-]/g, "_");
      const existing = await this.queue.getJob(id);
      const queued =
        existing ??
        (await this.queue.add(job.id, data, {
          jobId: id,
          attempts: this.o.attempts ?? 3,
          backoff: { type: "fixed", delay: 500 },
          removeOnComplete: false,
          removeOnFail: false,
        }));
      let value: RolloutJobReturn;
      try {
        value = (await queued.waitUntilFinished(this.events)) as RolloutJobReturn;
      } catch (err) {
        return { id: job.id, error: `the queue job ${id} failed: ${(err as Error).message}` };
      }
      if (value.error) return { id: job.id, error: value.error };
      const partial = `${job.outDir}.partial`;
      rmSync(partial, { recursive: true, force: true });
      unpackDir(value.files, partial);
      rmSync(job.outDir, { recursive: true, force: true });
      mkdirSync(join(job.outDir, ".."), { recursive: true });
      renameSync(partial, job.outDir);
      return { id: job.id };
    });
    const running = new Map(pending.map((p, i) => [i, p.then((r) => ({ i, r }))]));
    while (running.size > 0) {
      const { i, r } = await Promise.race(running.values());
      running.delete(i);
      yield r;
    }
  }

  async close(): Promise<void> {
    await this.events.close();
    await this.queue.close();
  }
}

export interface WorkerOptions {
  url: string;
  concurrency: number;
  /** How long a job's lock lasts without renewal; a dead worker's job returns to the queue after this. */
  lockDurationMs?: number;
  onEvent?: (text: string) => void;
}

/** `hone worker`: runs rollouts from the queue. API keys come only from this machine's environment. */
export async function startWorker(o: WorkerOptions): Promise<{ close(): Promise<void> }> {
  const connection = connectionFrom(o.url);
  const name = `${hostname()}:${process.pid}`;
  const caches = new WorkerCaches(Math.max(1, Math.min(4, o.concurrency)));
  const worker = new Worker<RolloutJobData, RolloutJobReturn>(
    QUEUE_NAME,
    async (job) => {
      const scratch = mkdtempSync(join(tmpdir(), "hone-worker-"));
      try {
        o.onEvent?.(`${name} runs ${job.data.jobId}`);
        const outDir = join(scratch, "rollout");
        const error = await executeJobData(job.data, outDir, caches, `worker ${name}`);
        return error ? { worker: name, files: {}, error } : { worker: name, files: packDir(outDir) };
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    },
    {
      connection,
      concurrency: o.concurrency,
      lockDuration: o.lockDurationMs ?? 30_000,
      stalledInterval: Math.min(30_000, o.lockDurationMs ?? 30_000),
      maxStalledCount: 3,
    },
  );
  await worker.waitUntilReady();
  o.onEvent?.(`worker ${name} ready on ${o.url} (concurrency ${o.concurrency})`);
  return {
    close: async () => {
      await worker.close();
      await caches.close();
    },
  };
}
