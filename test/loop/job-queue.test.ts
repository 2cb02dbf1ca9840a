import { type Job, Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type QAJobData, queueJobId } from "../../src/loop/distributed/job-data.ts";
import { EVENTS_KEPT, JOB_TTL_SEC, JobQueue, QUEUE_NAME } from "../../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";
import { fileRedis, freePort, started } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// The coordinator's wait for a queued job ends even when the job's end never reaches it as an event: a look at the
// queue (the sweep) finds the job finished, failed, or gone with the Redis that held it. Without it the wait, and the
// run waiting on it, never ended.

let url = "";
let stopRedis = async () => {};
const open: { close(): Promise<unknown> }[] = [];

beforeAll(async () => {
  if (missing("redis-server")) return;
  ({ url, stop: stopRedis } = await fileRedis(5)); // a database of this file's own
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
  const raw = new Redis(connectionFrom(url));
  await raw.flushdb(); // nothing of this file's stays queued for a later test or run against the same Redis
  raw.disconnect();
});

afterAll(() => stopRedis());

/** A queue that looks at waits older than `sweepSec` (0.2 s) every `sweepSec`. */
const jobQueue = (sweepSec = 0.2) => {
  const q = new JobQueue(url, sweepSec);
  open.push(q);
  return q;
};

/** A bare BullMQ worker on the coordinator's queue: it answers a job's seed; seed 2 fails, seed 5 fails its first try. */
const worker = () => {
  const w = new Worker(
    QUEUE_NAME,
    async (job: Job) => {
      if (job.data.seed === 2 || (job.data.seed === 5 && job.attemptsMade === 0)) throw new Error("boom");
      return { seed: job.data.seed };
    },
    { connection: connectionFrom(url) },
  );
  open.push(w);
  return w;
};

const data = (seed: number) => ({ kind: "qa", jobId: `job-${seed}`, seed }) as unknown as QAJobData;

describe("a queued job's wait (JobQueue)", () => {
  it("ends with the job's result or failure when its event never reaches the coordinator", { timeout: 20_000 }, async () => {
    const q = jobQueue();
    // The coordinator hears nothing of the queue from here on, as one that was paused past the stream's length.
    await (await q.ready()).close();
    worker();
    expect(await q.submit("run-a", "job-1", data(1), { attempts: 1 })).toEqual({ seed: 1 });
    expect(await q.submit("run-a", "job-2", data(2), { attempts: 1 })).toEqual({
      failed: expect.stringMatching(/failed: boom$/),
    });
    // Failed once with an attempt left, it waits 0.5 s to be tried again: the looks meanwhile leave it be.
    expect(await q.submit("run-a", "job-5", data(5), { attempts: 2 })).toEqual({ seed: 5 });
  });

  it("removes from Redis a job whose end it took; one whose result it could not take stays a week for a resume", {
    timeout: 20_000,
  }, async () => {
    const q = jobQueue();
    worker();
    const raw = new Redis(connectionFrom(url));
    open.push({ close: () => raw.quit() });
    const inRedis = async (runKey: string, seed: number) => {
      const id = queueJobId(runKey, data(seed));
      const [hash, completed, failed] = await Promise.all([
        raw.exists(`bull:${QUEUE_NAME}:${id}`),
        raw.zscore(`bull:${QUEUE_NAME}:completed`, id),
        raw.zscore(`bull:${QUEUE_NAME}:failed`, id),
      ]);
      return hash === 1 || completed !== null || failed !== null;
    };
    expect(await q.submit("run-f", "job-8", data(8), { attempts: 1 })).toEqual({ seed: 8 });
    expect(await q.submit("run-f", "job-2", data(2), { attempts: 1 })).toEqual({
      failed: expect.stringMatching(/failed: boom$/),
    });
    const cannot = () => {
      throw new Error("disk full");
    };
    await expect(q.submit("run-f", "job-9", data(9), { attempts: 1, take: cannot })).rejects.toThrow("disk full");
    // Taken jobs leave together, half a second after the first; a job to keep stays.
    expect(await q.submit("run-f", "job-10", data(10), { attempts: 1, keep: true })).toEqual({ seed: 10 });
    await new Promise((r) => setTimeout(r, 1000));
    expect(await inRedis("run-f", 10)).toBe(true);
    expect([await inRedis("run-f", 8), await inRedis("run-f", 2), await inRedis("run-f", 9)]).toEqual([false, false, true]);
    const queue = new Queue(QUEUE_NAME, { connection: connectionFrom(url) });
    open.push(queue);
    const kept = await queue.getJob(queueJobId("run-f", data(9)));
    expect(kept?.finishedOn).toBeGreaterThan(0);
    expect(kept?.opts).toMatchObject({ removeOnComplete: { age: JOB_TTL_SEC }, removeOnFail: { age: JOB_TTL_SEC } });
    // A coordinator restarted with --resume takes it from there.
    expect(await jobQueue(1000).submit("run-f", "job-9", data(9), { attempts: 1 })).toEqual({ seed: 9 });
  });

  it("keeps the queue's event stream to its last EVENTS_KEPT events (each completed one carries a whole result)", {
    timeout: 60_000,
  }, async () => {
    const q = jobQueue();
    worker();
    let next = 0;
    const jobs = 700; // about four events each
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < jobs) {
          const seed = 1000 + next++;
          expect(await q.submit("run-h", `job-${seed}`, data(seed), { attempts: 1 })).toEqual({ seed });
        }
      }),
    );
    const raw = new Redis(connectionFrom(url));
    open.push({ close: () => raw.quit() });
    const kept = await raw.xlen(`bull:${QUEUE_NAME}:events`);
    expect(kept).toBeGreaterThanOrEqual(EVENTS_KEPT);
    expect(kept).toBeLessThan(EVENTS_KEPT + 200); // trimmed in whole nodes of the stream (MAXLEN ~)
  });

  it("ends with an error naming the cause when the queue's Redis loses the job", { timeout: 20_000 }, async () => {
    const q = jobQueue();
    const waiting = q.submit("run-b", "job-3", data(3), { attempts: 1 });
    const raw = new Redis(connectionFrom(url));
    while ((await raw.keys("bull:*:wait")).length === 0) await new Promise((r) => setTimeout(r, 20));
    await raw.flushdb(); // as a Redis restarted without its data
    raw.disconnect();
    expect(await waiting).toEqual({ failed: expect.stringMatching(/is no longer in the queue \(was the queue's Redis/) });
  });

  it("a job found in the queue, finished before anyone listened, ends with its result at once", { timeout: 20_000 }, async () => {
    // The job as a coordinator stopped meanwhile added it, finished by a worker while no one listened.
    const queue = new Queue(QUEUE_NAME, { connection: connectionFrom(url) });
    open.push(queue);
    const id = queueJobId("run-d", data(6));
    await queue.add("job-6", data(6), { jobId: id, removeOnComplete: { age: JOB_TTL_SEC } });
    worker();
    while (!(await queue.getJob(id))?.finishedOn) await new Promise((r) => setTimeout(r, 20));
    // The restarted coordinator (no look at the queue for 1000 s) adds the same job: BullMQ finds it there, finished.
    expect(await jobQueue(1000).submit("run-d", "job-6", data(6), { attempts: 1 })).toEqual({ seed: 6 });
  });

  it("says a Redis that stops answering once, without its password, and closes without waiting for it", {
    timeout: 20_000,
  }, async () => {
    const port = await freePort();
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    const redis = await started("redis-server", args, /Ready to accept connections/);
    const said: string[] = [];
    const stacks = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const q = new JobQueue(`redis://:s3cret@127.0.0.1:${port}`, 0.2, (text) => said.push(text));
      const waiting = q.submit("run-e", "job-7", data(7), { attempts: 1 });
      await new Promise((r) => setTimeout(r, 300));
      redis.kill("SIGKILL");
      await new Promise((r) => setTimeout(r, 1500)); // the connections retry meanwhile
      const t = Date.now();
      await q.close();
      expect(Date.now() - t).toBeLessThan(5000);
      expect(await waiting).toEqual({ failed: expect.stringMatching(/closed its queue before the job ended/) });
      expect(said).toEqual([
        `the queue at redis://:***@127.0.0.1:${port} is not answering (ECONNREFUSED); waiting for it, the connection retries`,
      ]);
      expect(stacks).not.toHaveBeenCalled();
    } finally {
      stacks.mockRestore();
      redis.kill("SIGKILL");
    }
  });

  it("leaves a job that is still waiting for a worker alone", { timeout: 20_000 }, async () => {
    const q = jobQueue();
    const waiting = q.submit("run-c", "job-4", data(4), { attempts: 1 });
    let ended = false;
    void waiting.then(() => {
      ended = true;
    });
    await new Promise((r) => setTimeout(r, 1000)); // five looks at the queue
    expect(ended).toBe(false);
    worker();
    expect(await waiting).toEqual({ seed: 4 });
  });
});
