import { createServer } from "node:http";
import { join } from "node:path";
import { Queue } from "bullmq";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BullmqRunner } from "../../src/loop/distributed/bullmq.ts";
import { startWorker } from "../../src/loop/distributed/bullmq-worker.ts";
import { keyRefusal } from "../../src/loop/distributed/execute.ts";
import { QUEUE_NAME } from "../../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";
import { resolveTask } from "../../src/task/builtin.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { listenLoopback } from "../helpers/loopback.ts";
import { fileRedis } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// A queued job names its endpoint and the variable its API key is read from. A worker that read any variable a job
// names would send whatever its environment holds to wherever the job says: it reads only the variables it was
// started with (`hone worker --api-key-env`, default OPENAI_API_KEY).

describe("which API key a job may have from a worker (keyRefusal)", () => {
  const endpoint = { model: "m", baseUrl: "http://127.0.0.1:9/v1" };
  it("refuses a variable the worker does not give, naming it and the flag", () => {
    expect(keyRefusal({ ...endpoint, apiKeyEnv: "AWS_SECRET_ACCESS_KEY" }, ["OPENAI_API_KEY"])).toMatch(
      /\$AWS_SECRET_ACCESS_KEY, which this worker does not give .*--api-key-env AWS_SECRET_ACCESS_KEY/,
    );
    expect(keyRefusal(endpoint, ["MY_KEY"])).toMatch(/\$OPENAI_API_KEY/);
  });
  it("gives the variables it names, and no key is asked for the offline model", () => {
    expect(keyRefusal(endpoint, ["OPENAI_API_KEY"])).toBeUndefined();
    expect(keyRefusal({ ...endpoint, apiKeyEnv: "MY_KEY" }, ["OPENAI_API_KEY", "MY_KEY"])).toBeUndefined();
    expect(keyRefusal({ model: "offline", apiKeyEnv: "AWS_SECRET_ACCESS_KEY" }, ["OPENAI_API_KEY"])).toBeUndefined();
  });
});

describe("a hone worker and a job that names another variable", () => {
  let url = "";
  let stopRedis = async () => {};
  let base = "";
  let closeServer = async () => {};
  const seen: string[] = [];

  beforeAll(async () => {
    if (missing("redis-server")) return;
    ({ url, stop: stopRedis } = await fileRedis(6)); // a database of this file's own
    const server = createServer((req, res) => {
      seen.push(String(req.headers.authorization));
      res.writeHead(500).end("no");
    });
    ({ url: base, close: closeServer } = await listenLoopback(server));
  });
  beforeEach((ctx) => requireTool(ctx, "redis-server"));
  afterAll(async () => {
    await closeServer();
    if (url) {
      const queue = new Queue(QUEUE_NAME, { connection: connectionFrom(url) });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
    await stopRedis();
  });

  const rollout = async (runKey: string, apiKeyEnvs?: string[]) => {
    const worker = await startWorker({ url, concurrency: 1, poolSize: 1, apiKeyEnvs });
    const task = await resolveTask("circle-packing");
    const executor = { model: "m", baseUrl: base, apiKeyEnv: "WORKER_ONLY_SECRET", retry: { maxAttempts: 1 } };
    const runner = new BullmqRunner({ url, runKey, task, taskRef: task.dir, executor, attempts: 1 });
    const job = {
      id: "r01-k0",
      harnessDir: join(ROOT, "harnesses", "initial"),
      startProgram: "x = 1\n",
      startEvaluation: { valid: true, score: 0, metrics: {}, artifacts: {}, seconds: 0 },
      seed: 0,
      maxEvals: 1,
      outDir: join(tempDir(), "r01-k0"),
    };
    try {
      for await (const r of runner.run([job])) return r;
    } finally {
      await runner.close();
      await worker.close(1000);
    }
  };

  it("never sends the worker's other secrets to the job's endpoint", async () => {
    process.env.WORKER_ONLY_SECRET = "the-workers-own-secret";
    try {
      const r = await rollout("key-refused");
      expect(seen.filter((a) => a.includes("the-workers-own-secret"))).toEqual([]);
      expect(r?.error).toMatch(/WORKER_ONLY_SECRET, which this worker does not give/);
      // Started to give that variable, the worker sends it.
      await rollout("key-given", ["WORKER_ONLY_SECRET"]);
      expect(seen).toContain("Bearer the-workers-own-secret");
    } finally {
      delete process.env.WORKER_ONLY_SECRET;
    }
  }, 120_000);
});
