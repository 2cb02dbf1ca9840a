import { join } from "node:path";
import { Queue, QueueEvents } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorker } from "../../src/loop/distributed/bullmq-worker.ts";
import { jobDataFault, toJobData } from "../../src/loop/distributed/job-data.ts";
import { QUEUE_NAME } from "../../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, ROOT } from "../helpers/fixtures.ts";
import { fileRedis } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";
import { seedRollout } from "../helpers/rollout-job.ts";

// Anyone who can write to the queue's Redis can add a job, and a worker took whatever data one held: a job of
// another shape failed deep inside ("Cannot read properties of null (reading 'kind')"), and the worker's own log
// said nothing of it (nor of a job refused for another task). Now such a job is refused with the fields that are
// wrong, and the worker says each job that failed.

const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
const rollout = () =>
  toJobData(seedRollout(task, "r01-k0", "/nowhere"), {
    runKey: "k",
    taskRef: "circle-packing",
    taskHash: "0".repeat(64),
    executor: { model: "offline" },
    harness: { digest: "a".repeat(64) },
  });
const qa = {
  kind: "qa",
  runKey: "k",
  jobId: "gsm8k/1",
  harness: { digest: "a".repeat(64) },
  benchmark: "gsm8k",
  task: { id: "1", question: "1+1?", answer: "2" },
  seed: 0,
  executor: { model: "offline" },
};

describe("jobDataFault", () => {
  it("takes a rollout job and a QA job as a coordinator makes them, and an older one with its files inline", () => {
    expect(jobDataFault(rollout())).toBeUndefined();
    expect(jobDataFault(qa)).toBeUndefined();
    const { harness: _h, ...old } = rollout();
    expect(jobDataFault({ ...old, harnessFiles: { "agent.yaml": "x" } })).toBeUndefined();
  });

  it("names what is wrong with a job of another shape", () => {
    expect(jobDataFault(null)).toBe("its data is not an object");
    expect(jobDataFault([1])).toBe("its data is not an object");
    expect(jobDataFault({ ...rollout(), task: null })).toMatch(/not a hone rollout job's \(task\.ref, task\.contentHash\)/);
    expect(jobDataFault({ ...rollout(), task: { ref: 7, contentHash: "x" } })).toMatch(/\(task\.ref\)$/);
    expect(jobDataFault({ ...rollout(), harness: "abc", maxEvals: -1 })).toMatch(/\(harness, maxEvals\)$/);
    expect(jobDataFault({ ...rollout(), executor: {} })).toMatch(/\(executor\.model\)$/);
    expect(jobDataFault({ ...qa, task: null })).toMatch(/not a hone QA job's \(task\.id\)$/);
  });
});

describe("a worker given a job of another shape", () => {
  let url = "";
  let stopRedis = async () => {};
  beforeAll(async () => {
    if (missing("redis-server")) return;
    ({ url, stop: stopRedis } = await fileRedis(14)); // a database of this file's own
  }, 30_000);
  afterAll(() => stopRedis());

  it("refuses it, naming the fields, says so, and goes on taking jobs", { timeout: 60_000 }, async (ctx) => {
    if (missing("redis-server")) return requireTool(ctx, "redis-server");
    const queue = new Queue(QUEUE_NAME, { connection: connectionFrom(url) });
    const events = new QueueEvents(QUEUE_NAME, { connection: connectionFrom(url) });
    await events.waitUntilReady();
    const said: string[] = [];
    const worker = await startWorker({ url, concurrency: 1, poolSize: 1, onEvent: (t) => said.push(t) });
    const end = async (name: string, data: unknown) => {
      const job = await queue.add(name, data, { jobId: `probe6-${name}-${Date.now()}`, attempts: 1 });
      return job.waitUntilFinished(events, 30_000).then(
        (value: unknown) => ({ value }),
        (err: Error) => ({ failed: err.message }),
      );
    };
    try {
      expect(await end("null", null)).toEqual({ failed: expect.stringMatching(/refuses the job: its data is not an object$/) });
      expect(await end("no-task", { ...rollout(), task: undefined })).toEqual({
        failed: expect.stringMatching(/refuses the job: its data is not a hone rollout job's \(task\.ref, task\.contentHash\)/),
      });
      // A coordinator of another hone may shape its jobs otherwise: the other hone is what is named.
      expect(await end("other-hone", { ...rollout(), task: undefined, hone: { version: "0.0.1", runtime: "x" } })).toEqual({
        failed: expect.stringMatching(/this hone differs from the coordinator's \(version \S+ here, 0\.0\.1 on the coordinator/),
      });
      // A job of the right shape for a task this worker has otherwise is still run to its refusal, and said too.
      const other = { ...rollout(), task: { ref: join(ROOT, "tasks", "circle-packing"), contentHash: "0".repeat(64) } };
      const refused = (await end("other-task", other)) as { value?: { error?: string } };
      expect(refused.value?.error).toMatch(/refusing to measure a different task/);
      expect(said.join("\n")).toMatch(/queue job probe6-null-\d+ failed: worker \S+ refuses the job: its data is not an object/);
      expect(said.join("\n")).toMatch(/r01-k0 failed: worker \S+: task .* refusing to measure a different task/);
    } finally {
      await worker.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await events.close();
      await queue.close();
    }
  });
});
