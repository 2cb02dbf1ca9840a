import { hostname } from "node:os";
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { HoneError } from "../../errors.ts";
import { isRecord } from "../../harness/formats/package-reader.ts";
import { DEFAULT_API_KEY_ENV } from "../../model/openai-compatible.ts";
import { withoutPassword } from "../../secret-url.ts";
import { executeJobData, executeQAJobData, WorkerCaches } from "./execute.ts";
import {
  currentHoneBuild,
  honeBuildRefusal,
  isQAJob,
  jobDataFault,
  packageKey,
  type QAJobData,
  type QAJobReturn,
  type RolloutJobData,
  type RolloutJobReturn,
} from "./job-data.ts";
import { QUEUE_NAME } from "./job-queue.ts";
import { connectionFrom, connectionHint, type QueueConnection, refuseRefusingQueue } from "./queue-connection.ts";

/** The largest harness package a worker takes from Redis, as JSON: a package's files are text of at most 1 MiB each. */
const MAX_PACKAGE_JSON_BYTES = 64 * 1024 * 1024;

/** JSON's value, or undefined for text that is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface WorkerOptions {
  url: string;
  concurrency: number;
  /** Warm evaluator processes per task; by default as many as the local pool would start, min(4, concurrency). */
  poolSize?: number;
  /** How long a job's lock lasts without renewal; a dead worker's job returns to the queue after this. */
  lockDurationMs?: number;
  onEvent?: (text: string) => void;
  /** The environment variables a job may name for its executor's API key (default: OPENAI_API_KEY alone). */
  apiKeyEnvs?: readonly string[];
}

/** Returns the value at KEYS[1], or nil when there is none, or its length when that is over ARGV[1] bytes: one step. */
const GET_AT_MOST = `local n = redis.call("STRLEN", KEYS[1])
if n > tonumber(ARGV[1]) then return n end
return redis.call("GET", KEYS[1])`;

/**
 * A worker's way to the harness packages in the queue's Redis (JobQueue.batch put them there), on a connection of its
 * own opened at the first fetch. What Redis holds is checked here for size and shape, and WorkerFiles checks the files
 * against the digest before it writes them.
 */
class PackageFetcher {
  private client?: Redis;
  constructor(
    private readonly connection: QueueConnection,
    private readonly key: (digest: string) => string,
  ) {}

  async fetch(digest: string): Promise<Record<string, string>> {
    if (!this.client) {
      this.client = new Redis(this.connection);
      // A lost queue is the worker's to report (once); this connection retries on its own meanwhile.
      this.client.on("error", () => undefined);
    }
    const got = (await this.client.eval(GET_AT_MOST, 1, this.key(digest), MAX_PACKAGE_JSON_BYTES)) as string | number | null;
    const name = `the harness package ${digest.slice(0, 12)}`;
    if (got === null) throw new Error(`${name} is not in the queue's Redis (was it emptied, or is it older than a week?)`);
    if (typeof got === "number") throw new Error(`${name} in the queue's Redis is ${got} bytes, over ${MAX_PACKAGE_JSON_BYTES}`);
    const files = parseJson(got);
    if (!isRecord(files) || !Object.values(files).every((t) => typeof t === "string"))
      throw new Error(`the queue's Redis holds something other than a harness package under ${packageKey(digest)}`);
    return files as Record<string, string>;
  }

  /** Drops the connection at once: nothing it could still be asked matters to a worker that stops. */
  close(): void {
    this.client?.disconnect();
  }
}

/** The shortest lock a worker takes on a job (`--lock-duration-ms`). */
const MIN_LOCK_MS = 1000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** `hone worker`: runs rollouts from the queue. API keys come only from this machine's environment. */
export async function startWorker(o: WorkerOptions): Promise<{ close(graceMs?: number): Promise<void> }> {
  // Checked before anything connects: BullMQ's own refusal comes from a worker already connecting, whose connections
  // then hold the process open.
  if (!(Number.isInteger(o.concurrency) && o.concurrency >= 1))
    throw new HoneError("usage", `--concurrency takes a whole number of rollouts at once, at least 1, not ${o.concurrency}`);
  const lockMs = o.lockDurationMs ?? 30_000;
  // BullMQ renews a lock at half its length: a shorter one would expire under a job still running.
  if (!(Number.isInteger(lockMs) && lockMs >= MIN_LOCK_MS))
    throw new HoneError(
      "usage",
      `--lock-duration-ms takes a whole number of milliseconds, at least ${MIN_LOCK_MS}, not ${lockMs}`,
    );
  const connection = connectionFrom(o.url);
  // A Redis that refuses the worker (a wrong password, a database out of range) is said now: its connections would
  // retry for ever, or serve database 0's jobs.
  await refuseRefusingQueue(o.url);
  const name = `${hostname()}:${process.pid}`;
  // A package a job names by digest is fetched from the queue's Redis, under the queue's prefix (`worker` is made below,
  // before any job runs).
  const packages = new PackageFetcher(connection, (digest: string): string => worker.toKey(packageKey(digest)));
  const caches = new WorkerCaches(
    o.poolSize ?? Math.max(1, Math.min(4, o.concurrency)),
    (digest) => packages.fetch(digest),
    o.apiKeyEnvs ?? [DEFAULT_API_KEY_ENV],
  );
  // Jobs in hand, so a stop knows whether there is anything to finish.
  let active = 0;
  const idle: (() => void)[] = [];
  const track = async <T>(run: () => Promise<T>): Promise<T> => {
    active++;
    try {
      return await run();
    } finally {
      if (--active === 0) for (const f of idle.splice(0)) f();
    }
  };
  const runOne = async (data: RolloutJobData | QAJobData): Promise<RolloutJobReturn | QAJobReturn> => {
    // A job of another shape (anyone who can write to the queue's Redis can add one) is refused, its fields named.
    const fault = jobDataFault(data);
    // A coordinator of another hone may send jobs of another shape: that difference is the one to name.
    if (fault) throw new Error(otherHone(data, name) ?? `worker ${name} refuses the job: ${fault}`);
    if (isQAJob(data)) {
      o.onEvent?.(`${name} runs QA task ${data.task.id}`);
      return executeQAJobData(data, caches, name);
    }
    o.onEvent?.(`${name} runs ${data.jobId}`);
    // The rollout's files stay in memory until they travel back.
    const r = await executeJobData(data, caches, `worker ${name}`);
    if (r.error) o.onEvent?.(`${name}: ${data.jobId} failed: ${r.error}`);
    return r.error ? { worker: name, files: {}, error: r.error } : { worker: name, files: r.files, records: r.records };
  };
  const worker = new Worker<RolloutJobData | QAJobData, RolloutJobReturn | QAJobReturn>(
    QUEUE_NAME,
    (job) =>
      track(async () => {
        try {
          return await runOne(job.data);
        } catch (err) {
          // Said here too: the coordinator that queued the job hears of it, this worker's operator would not.
          o.onEvent?.(`${name}: queue job ${job.id} failed: ${(err as Error).message}`);
          throw err;
        }
      }),
    {
      connection,
      concurrency: o.concurrency,
      lockDuration: lockMs,
      stalledInterval: Math.min(30_000, lockMs),
      maxStalledCount: 3,
    },
  );
  // A lost connection is said once per kind of error (not a stack per retry); the connection retries on its own.
  let lastError = "";
  let closing = false;
  worker.on("error", (err) => {
    const text = (err as NodeJS.ErrnoException).code ?? err.message;
    if (closing || text === lastError) return;
    lastError = text;
    o.onEvent?.(
      `worker ${name}: the queue at ${withoutPassword(o.url)} is not answering (${text}); retrying${connectionHint(err)}`,
    );
  });
  await worker.waitUntilReady();
  o.onEvent?.(`worker ${name} ready on ${withoutPassword(o.url)} (concurrency ${o.concurrency})`);
  return {
    /**
     * Stops taking jobs and finishes the ones in hand for up to `graceMs`; past that (or at once when nothing is in
     * hand and Redis does not answer) the worker closes without waiting, and a job it held returns to the queue
     * when its lock expires, to run on another worker.
     */
    close: async (graceMs = 30_000) => {
      closing = true;
      const graceful = worker.close().then(() => true);
      const whenIdle = active === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve));
      const done = await Promise.race([
        graceful,
        whenIdle.then(() => sleep(2000)).then(() => false),
        sleep(graceMs).then(() => false),
      ]);
      if (!done) {
        if (active > 0) o.onEvent?.(`worker ${name}: ${active} job(s) not finished; they return to the queue`);
        await Promise.race([worker.close(true).catch(() => undefined), sleep(2000)]);
        await Promise.race([worker.disconnect().catch(() => undefined), sleep(1000)]);
      }
      await caches.close();
      packages.close();
    },
  };
}

/** The refusal of a job from a coordinator running another hone (version or evaluation runtime), if it is one. */
function otherHone(data: unknown, name: string): string | undefined {
  const theirs = isRecord(data) ? data.hone : undefined;
  return theirs === undefined ? undefined : honeBuildRefusal(theirs, currentHoneBuild(), `worker ${name}`);
}
