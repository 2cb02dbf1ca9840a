import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Queue, Worker } from "bullmq";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BullmqRunner } from "../../src/loop/distributed/bullmq.ts";
import type { RolloutJobData } from "../../src/loop/distributed/job-data.ts";
import { QUEUE_NAME } from "../../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";
import { Recording, readRecords } from "../../src/loop/recording.ts";
import type { RolloutJobResult } from "../../src/loop/runner.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, tempDir } from "../helpers/fixtures.ts";
import { fileRedis } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";
import { seedRollout } from "../helpers/rollout-job.ts";

// What a queued job's worker sends back is the worker's to choose: a coordinator must take a well-formed result, and
// turn anything else into that job's error, never a crash of the run (a resumed run would meet the same value again)
// nor a file outside the rollout's folder. The worker here is a bare BullMQ worker speaking the real protocol.

let url = "";
let stopRedis = async () => {};

beforeAll(async () => {
  if (missing("redis-server")) return;
  ({ url, stop: stopRedis } = await fileRedis(3)); // a database of this file's own
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

afterAll(async () => {
  if (url) {
    // Nothing of this file's stays queued for a later run against the same Redis.
    const queue = new Queue(QUEUE_NAME, { connection: connectionFrom(url) });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  }
  await stopRedis();
});

const HEX = "a".repeat(64);
const result = `${JSON.stringify({ status: "completed" })}\n`;
/** What the hostile worker answers, by job id. */
const answers: Record<string, unknown> = {
  "not-an-object": null,
  "a-number-for-a-file": { worker: "w", files: { "result.json": 5 } },
  "a-path-out": { worker: "w", files: { "result.json": result, "../escaped.txt": "x" } },
  "the-folder-itself": { worker: "w", files: { ".": "x" } },
  "a-record-of-no-model": {
    worker: "w",
    files: { "result.json": result, "trajectory.jsonl": "" },
    records: { responses: [{ key: HEX, model: {}, response: { message: { tool_calls: [] } } }], evaluations: [] },
  },
  "well-formed": {
    worker: "w",
    files: { "result.json": result, "trajectory.jsonl": "", "programs/0001.py": "x = 1\n" },
    records: {
      responses: [],
      evaluations: [{ key: HEX, result: { valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 } }],
    },
  },
};

describe("a coordinator facing a hostile worker", () => {
  it("turns each malformed result into that job's error, keeps the well-formed ones, writes nothing outside", {
    timeout: 60_000,
  }, async () => {
    const worker = new Worker(QUEUE_NAME, async (job) => answers[(job.data as RolloutJobData).jobId], {
      connection: connectionFrom(url),
      concurrency: 8,
    });
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const dir = mkdtempSync(join(tempDir(), "run-"));
    const recording = new Recording(dir, { cache: { mode: "off" } });
    const runner = new BullmqRunner({
      url,
      runKey: `hostile-${Date.now()}`,
      task,
      taskRef: task.dir,
      executor: { model: "offline" },
      importRecords: (records) => recording.import(records),
    });
    const results = new Map<string, RolloutJobResult>();
    try {
      await worker.waitUntilReady();
      const jobs = Object.keys(answers).map((id, seed) => seedRollout(task, id, join(dir, "rollouts", id), seed));
      for await (const r of runner.run(jobs)) results.set(r.id, r);
    } finally {
      await runner.close();
      await worker.close();
      recording.close();
    }
    expect(results.size).toBe(Object.keys(answers).length);
    expect(results.get("not-an-object")?.error).toMatch(/not a rollout's result/);
    expect(results.get("a-number-for-a-file")?.error).toMatch(/not a rollout's result/);
    expect(results.get("a-path-out")?.error).toMatch(/could not be taken.*leaves its folder/);
    expect(results.get("the-folder-itself")?.error).toMatch(/could not be taken.*leaves its folder/);
    // Nothing escaped, and no refused rollout appears under its name.
    expect(existsSync(join(dir, "rollouts", "escaped.txt"))).toBe(false);
    expect(existsSync(join(dir, "escaped.txt"))).toBe(false);
    expect(readdirSync(join(dir, "rollouts")).sort()).toEqual(["a-record-of-no-model", "well-formed"]);
    // A record of the wrong shape is refused, the rest is taken; the folder holds the files, its records are in the run.
    expect(results.get("a-record-of-no-model")?.error).toBeUndefined();
    expect(results.get("well-formed")?.error).toBeUndefined();
    expect(readFileSync(join(dir, "rollouts", "well-formed", "programs", "0001.py"), "utf8")).toBe("x = 1\n");
    expect(existsSync(join(dir, "rollouts", "well-formed", "records.json"))).toBe(false);
    const db = new Database(join(dir, "hone.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT count(*) AS n FROM responses").get()).toEqual({ n: 0 });
      expect(db.prepare("SELECT key FROM evaluation_records").all()).toEqual([{ key: HEX }]);
    } finally {
      db.close();
    }
  });
});

describe("records shipped from elsewhere", () => {
  it("are refused one by one when a field has the wrong type, and all together past the cap", () => {
    const response = { key: HEX, model: "m", response: { message: { tool_calls: [] } } };
    const taken = readRecords({ responses: [response, { ...response, model: 3 }, { ...response, key: "x" }], evaluations: [] });
    expect(taken.responses).toEqual([response]);
    const evaluation = { key: HEX, result: { valid: true } };
    const flood = readRecords({ responses: [], evaluations: Array.from({ length: 100_001 }, () => evaluation) });
    expect(flood).toEqual({ responses: [], evaluations: [] });
    expect(readRecords({ responses: [], evaluations: Array.from({ length: 3 }, () => evaluation) }).evaluations).toHaveLength(3);
  });
});

describe("a coordinator that closes while it waits", () => {
  it("ends the wait of a job it found already queued (a restarted coordinator), as of one it added", {
    timeout: 60_000,
  }, async () => {
    // No worker takes jobs here: the job stays queued through both coordinators.
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const runKey = `waiting-${Date.now()}`;
    for (const coordinator of ["added it", "found it queued"]) {
      const runner = new BullmqRunner({ url, runKey, task, taskRef: task.dir, executor: { model: "offline" } });
      const results: RolloutJobResult[] = [];
      const iterating = (async () => {
        for await (const r of runner.run([seedRollout(task, "r01-k0", join(tempDir(), "r01-k0"), 1)])) results.push(r);
      })();
      await new Promise((r) => setTimeout(r, 1000)); // added, or found (BullMQ's duplicated event), and waited for
      await runner.close();
      const ended = await Promise.race([iterating.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
      expect(ended, coordinator).toBe(true);
      expect(
        results.map((r) => r.error),
        coordinator,
      ).toEqual([expect.stringMatching(/closed its queue before the job ended/)]);
    }
  });
});
