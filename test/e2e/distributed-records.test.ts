import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { Queue, QueueEvents } from "bullmq";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { contentHash } from "../../src/harness/files.ts";
import { BullmqQARunner, BullmqRunner } from "../../src/loop/distributed/bullmq.ts";
import { queueJobId, type RolloutJobReturn, toJobData } from "../../src/loop/distributed/job-data.ts";
import { QUEUE_NAME } from "../../src/loop/distributed/job-queue.ts";
import { connectionFrom } from "../../src/loop/distributed/queue-connection.ts";
import type { QAJobResult } from "../../src/loop/qa-runner.ts";
import { readRecords, type ShippedRecords } from "../../src/loop/recording.ts";
import type { RolloutJobResult } from "../../src/loop/runner.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { sumQuestions } from "../helpers/qa-data.ts";
import { ciRedisUrl, freePort } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// Distributed results equal local results: a real redis-server and two `hone worker` processes.

let redis: ChildProcess | undefined;
let url = "";
const workers: ChildProcess[] = [];
const lines: string[] = [];

function startWorker(): Promise<void> {
  const w = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), "worker", "--queue", url, "--concurrency", "2"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  workers.push(w);
  return new Promise((resolve) => {
    w.stdout?.on("data", (d) => {
      const got = String(d).trim().split("\n");
      lines.push(...got);
      if (got.some((l) => / ready on /.test(l))) resolve();
    });
  });
}

beforeAll(async () => {
  if (missing("redis-server")) return;
  const ci = ciRedisUrl(2); // a database of this file's own: the other distributed file may run at once
  if (ci) url = ci;
  else {
    const port = await freePort();
    redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    url = `redis://127.0.0.1:${port}`;
    await new Promise((r) => setTimeout(r, 500));
  }
  await Promise.all([startWorker(), startWorker()]);
}, 120_000);

// Every test here needs the queue: skipped, with the reason, where redis-server is missing.
beforeEach((ctx) => requireTool(ctx, "redis-server"));

afterAll(() => {
  for (const w of workers) w.kill("SIGKILL");
  redis?.kill("SIGKILL");
});

const strategy = (to: string, from: string) =>
  `diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -2,3 +2,3 @@\n final_answer exactly once with your answer in the requested format.\n \n-hone-hint: qa_strategy=${from}\n+hone-hint: qa_strategy=${to}\n`;

function records(dir: string) {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const q = (sql: string) => db.prepare(sql).all();
  const r = {
    rounds: q("SELECT round, status, incumbent_commit, incumbent_score, best_score, moved FROM rounds ORDER BY round"),
    candidates: q("SELECT id, status, commit_sha, content_hash, gate_error, score FROM candidates ORDER BY id"),
    decisions: q("SELECT round, candidate_id, decision, rule, reason, score FROM decisions ORDER BY round"),
    measurements: q("SELECT id, commit_sha, status, tasks, solved, infra, mean_score FROM measurements ORDER BY id"),
    tasks: q(
      "SELECT measurement_id, task_id, job_id, status, score, steps, tokens, error, extracted FROM task_results ORDER BY measurement_id, idx",
    ),
  };
  db.close();
  return r;
}

describe("hone train through two BullMQ workers", () => {
  it("promotes exactly as the local run does, with identical per-task results, and its records replay", {
    timeout: 600_000,
  }, async () => {
    const dir = tempDir();
    write(join(dir, "sum.diff"), strategy("sum", "last"));
    write(join(dir, "product.diff"), strategy("product", "sum"));
    write(
      join(dir, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: test, limit: 6, data_dir: ${sumQuestions(6)}}\nestimator: {kind: patch_queue, patches: [sum.diff, product.diff]}\ncriterion: {kind: strict_pareto}\n`,
    );
    const args = ["train", "--config", join(dir, "train.yaml"), "--epochs", "2", "--json"];
    const local = await hone([...args, "--out", join(dir, "local")], { timeoutMs: 300_000 });
    expect(local.code, local.stderr).toBe(0);
    const before = lines.filter((l) => / runs QA task /.test(l)).length;
    const queued = await hone([...args, "--out", join(dir, "queued"), "--queue", url], { timeoutMs: 300_000 });
    expect(queued.code, queued.stderr).toBe(0);
    const a = records(join(dir, "local"));
    const b = records(join(dir, "queued"));
    // The local run promotes: the panel is one where a wrong queue (a candidate handed the baseline's result) would tie.
    expect(a.decisions.map((d) => (d as { decision: string }).decision)).toEqual(["promote", "reject"]);
    expect(b).toEqual(a);
    // Every measured task went through the workers: 6 for the seed, 6 per candidate.
    expect(lines.filter((l) => / runs QA task /.test(l)).length - before).toBeGreaterThanOrEqual(18);
    const replay = await hone(["replay", join(dir, "queued"), "--json"], { timeoutMs: 300_000 });
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout).matches).toBe(true);
  });
});

describe("hone optimize through two BullMQ workers", () => {
  it("a queued run replays exactly from the records its workers shipped back", { timeout: 600_000 }, async () => {
    const out = join(tempDir(), "queued-opt");
    const r = await hone(optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 3, seed: 2, out, extra: ["--queue", url] }), {
      timeoutMs: 300_000,
    });
    expect(r.code, r.stderr).toBe(0);
    // The records went into the run's hone.db before each rollout's folder appeared, not into the folder.
    expect(existsSync(join(out, "rollouts", "r01-k0", "result.json"))).toBe(true);
    expect(existsSync(join(out, "rollouts", "r01-k0", "records.json"))).toBe(false);
    const replay = await hone(["replay", out, "--json"], { timeoutMs: 300_000 });
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ kind: "optimize", matches: true, differences: [] });
  });
});

describe("queue job ids carry the work", () => {
  it("two QA jobs with the same name and task but different harnesses are two executions", { timeout: 120_000 }, async () => {
    const harness = (to: string) => {
      const d = join(tempDir(), "qa");
      cpSync(join(ROOT, "harnesses", "qa"), d, { recursive: true });
      const prompt = join(d, "prompt.md");
      writeFileSync(prompt, readFileSync(prompt, "utf8").replace("qa_strategy=last", `qa_strategy=${to}`));
      return d;
    };
    const runner = new BullmqQARunner({ url, runKey: `same-${Date.now()}`, executor: { model: "offline" } });
    const task = { id: "q-sum", question: "Ann has 3 apples and buys 4 more. How many?", gold: "7" };
    const results: QAJobResult[] = [];
    const before = lines.filter((l) => / runs QA task q-sum/.test(l)).length;
    for (const h of [harness("last"), harness("sum")])
      for await (const r of runner.run([{ id: "same-id", harnessDir: h, benchmark: "gsm8k", task, seed: 0 }])) results.push(r);
    await runner.close();
    expect(results.map((r) => r.result.correct)).toEqual([false, true]);
    expect(lines.filter((l) => / runs QA task q-sum/.test(l)).length - before).toBe(2);
  });

  it("two rollout jobs with the same id differing only in harness are two executions", { timeout: 120_000 }, async () => {
    const task = loadTaskFolder(join(ROOT, "tasks", "circle-packing"), { id: "circle-packing" });
    const runner = new BullmqRunner({
      url,
      runKey: `same-rollout-${Date.now()}`,
      task,
      taskRef: task.dir,
      executor: { model: "offline" },
    });
    const seedHarness = join(ROOT, "harnesses", "initial");
    const other = join(tempDir(), "initial");
    cpSync(seedHarness, other, { recursive: true });
    writeFileSync(join(other, "prompt.md"), `${readFileSync(join(other, "prompt.md"), "utf8")}\nhone-hint: step_scale=0.3\n`);
    const start = { valid: true, score: 0.9, metrics: {}, artifacts: {}, seconds: 0 };
    const before = lines.filter((l) => / runs r01-k0$/.test(l)).length;
    const results: RolloutJobResult[] = [];
    const outs: string[] = [];
    for (const h of [seedHarness, other]) {
      const outDir = join(tempDir(), "r01-k0");
      outs.push(outDir);
      for await (const r of runner.run([
        { id: "r01-k0", harnessDir: h, startProgram: task.seedProgram, startEvaluation: start, seed: 1, maxEvals: 2, outDir },
      ]))
        results.push(r);
    }
    await runner.close();
    expect(results.map((r) => r.error)).toEqual([undefined, undefined]);
    expect(lines.filter((l) => / runs r01-k0$/.test(l)).length - before).toBe(2);
    const hashes = outs.map(
      (o) => JSON.parse(readFileSync(join(o, "trajectory.jsonl"), "utf8").split("\n")[0] as string).harness.content_hash,
    );
    expect(hashes[0]).not.toBe(hashes[1]);
  });
  it("a job that ended while its coordinator was stopped is collected by the restarted one, not run again", {
    timeout: 120_000,
  }, async () => {
    const task = loadTaskFolder(join(ROOT, "tasks", "circle-packing"), { id: "circle-packing" });
    const runKey = `restarted-${Date.now()}`;
    const start = { valid: true, score: 0.9, metrics: {}, artifacts: {}, seconds: 0 };
    const runs = () => lines.filter((l) => / runs r02-k0$/.test(l)).length;
    const before = runs();
    const outDir = join(tempDir(), "r02-k0");
    const job = { id: "r02-k0", harnessDir: join(ROOT, "harnesses", "initial"), startProgram: task.seedProgram };
    const jobs = [{ ...job, startEvaluation: start, seed: 3, maxEvals: 2, outDir }];
    // Each model call takes 300 ms, so the job is still running when the first coordinator stops (at 0 ms, a worker
    // could end it before the coordinator had seen it start).
    const options = { url, runKey, task, taskRef: task.dir, executor: { model: "offline", offlineLatencyMs: 300 } };
    // The first coordinator stops once a worker has the job, before it ends (as one stopped mid-round).
    const first = new BullmqRunner(options);
    const stopped = first.run(jobs)[Symbol.asyncIterator]().next();
    while (runs() === before) await new Promise((r) => setTimeout(r, 20));
    await first.close();
    expect((await stopped).value?.error).toMatch(/closed its queue before the job ended/);
    expect(existsSync(outDir)).toBe(false);
    // Restarted (with --resume), it names the same job and takes what the worker finished meanwhile.
    const imported: ShippedRecords[] = [];
    const second = new BullmqRunner({ ...options, importRecords: (r: ShippedRecords) => imported.push(r) });
    for await (const r of second.run(jobs)) expect(r.error).toBeUndefined();
    await second.close();
    expect(runs() - before).toBe(1);
    expect(readFileSync(join(outDir, "trajectory.jsonl"), "utf8")).toMatch(/"type"/);
    expect(imported).toHaveLength(1);
    expect(imported[0]?.responses.length).toBeGreaterThan(0);
    expect(imported[0]?.evaluations.length).toBeGreaterThan(0);
    expect(existsSync(join(outDir, "records.json"))).toBe(false);
  });
});

describe("a worker and a coordinator of different versions", () => {
  it("a job from a coordinator that does not take records apart gets them as records.json among its files", {
    timeout: 120_000,
  }, async () => {
    const task = loadTaskFolder(join(ROOT, "tasks", "circle-packing"), { id: "circle-packing" });
    const start = { valid: true, score: 0.9, metrics: {}, artifacts: {}, seconds: 0 };
    const job = { id: "old-coordinator", harnessDir: join(ROOT, "harnesses", "initial"), seed: 5, maxEvals: 1 };
    const opts = {
      runKey: `old-${Date.now()}`,
      taskRef: task.dir,
      taskHash: contentHash(task.dir),
      executor: { model: "offline" },
    };
    const data = toJobData({ ...job, startProgram: task.seedProgram, startEvaluation: start }, opts);
    expect(data.recordsBeside).toBeUndefined();
    // Added as an older coordinator added its jobs: no recordsBeside in the data.
    const queue = new Queue(QUEUE_NAME, { connection: connectionFrom(url) });
    const events = new QueueEvents(QUEUE_NAME, { connection: connectionFrom(url) });
    try {
      await events.waitUntilReady();
      const added = await queue.add(job.id, data, { jobId: queueJobId(opts.runKey, data) });
      const value = (await added.waitUntilFinished(events)) as RolloutJobReturn;
      expect(value.error).toBeUndefined();
      expect(value.records).toBeUndefined();
      const records = readRecords(JSON.parse(value.files["records.json"] as string));
      expect(records.responses.length).toBeGreaterThan(0);
      expect(value.files["result.json"]).toBeDefined();
    } finally {
      await events.close();
      await queue.close();
    }
  });
});

describe("hone run through a BullMQ worker", () => {
  it("gives the local run's result, the rollout ran on a worker, and the run replays", { timeout: 300_000 }, async () => {
    const dir = tempDir();
    const args = ["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "3", "--seed", "4", "--json"];
    const local = await hone([...args, "--out", join(dir, "local")], { timeoutMs: 120_000 });
    expect(local.code, local.stderr).toBe(0);
    const before = lines.filter((l) => / runs rollout$/.test(l)).length;
    const queued = await hone([...args, "--out", join(dir, "queued"), "--queue", url], { timeoutMs: 120_000 });
    expect(queued.code, queued.stderr).toBe(0);
    expect(lines.filter((l) => / runs rollout$/.test(l)).length - before).toBe(1);
    const { out_dir: _a, usage: _u, ...mine } = JSON.parse(local.stdout);
    const { out_dir: _b, usage: _v, ...theirs } = JSON.parse(queued.stdout);
    expect(theirs).toEqual(mine);
    for (const f of ["trajectory.jsonl", "best_program.py"]) expect(existsSync(join(dir, "queued", f))).toBe(true);
    const replay = await hone(["replay", join(dir, "queued"), "--json"], { timeoutMs: 120_000 });
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true });
  });
});
