import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { executeJobData, runtimeHere, WorkerCaches } from "../../src/loop/distributed/execute.ts";
import { placeRollout, queueJobId, type RolloutJobData, toJobData } from "../../src/loop/distributed/job-data.ts";
import type { SlurmRunner } from "../../src/loop/distributed/slurm.ts";
import { remoteRunner } from "../../src/loop/remote-runner.ts";
import { EVALUATOR_FILE, readEvaluatorFile, recordRollout } from "../../src/loop/rollout-records.ts";
import type { RolloutJobResult } from "../../src/loop/runner.ts";
import { HONE_VERSION, type IdentityParts } from "../../src/measure/identity.ts";
import { createRunDb, openDb } from "../../src/store/db.ts";
import { taskContentHash } from "../../src/task/content-hash.ts";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { EvaluatorRuntime } from "../../src/task/evaluator-runtime.ts";
import { CIRCLE_PACKING, tempDir } from "../helpers/fixtures.ts";
import { fileRedis } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";
import { seedRollout } from "../helpers/rollout-job.ts";

// What a remote rollout is measured under must be what the run's records say it was measured under.
// 1. A Slurm job named its task by the hash of the task folder's files alone, while the job (`hone rollout-job`)
//    checks the task's content hash, which also covers its python_path (and a tasks.yaml entry's overrides, what its
//    links read): every rollout of such a task on Slurm was refused as "a different task".
// 2. The run's measurement identity named the evaluator's Python, numpy and sandbox as the coordinator has them, for
//    every rollout, wherever it was measured. A worker or Slurm node never refuses a job for its own (a login node
//    without user namespaces, module Pythons a patch release apart): it reports them with each rollout
//    (evaluator.json among its files), and that rollout's identity names them, so a receipt, a replay or a
//    comparison says where they differ from the coordinator's. Jobs do not carry the coordinator's (their queue id
//    would change with a numpy upgrade on the coordinator, and a restarted coordinator run its queued jobs again).

/** circle-packing with a python_path folder outside the task's, as a task sharing modules with others has. */
function taskWithPythonPath() {
  const root = tempDir();
  const dir = join(root, "task");
  cpSync(CIRCLE_PACKING, dir, { recursive: true });
  mkdirSync(join(root, "lib"));
  writeFileSync(join(root, "lib", "helper.py"), "SHARED = 1\n");
  writeFileSync(join(dir, "hone.yaml"), `${readFileSync(join(dir, "hone.yaml"), "utf8")}\npython_path: [../lib]\n`);
  return loadTaskFolder(dir, { id: "circle-packing-shared" });
}

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

/**
 * Stand-ins for Slurm on PATH: sbatch runs the job script there and then (its log where #SBATCH --output says) and
 * prints an id; the job is then no longer queued, and scontrol says it completed.
 */
function fakeSlurm(): void {
  const bin = join(tempDir(), "bin");
  mkdirSync(bin);
  const bodies = {
    sbatch: 'bash "$3" > "$(dirname "$3")/slurm.out" 2>&1; echo 4242',
    squeue: "exit 0",
    scontrol: "echo JobState=COMPLETED",
    sacct: "exit 1",
    scancel: "exit 0",
  };
  for (const [cmd, body] of Object.entries(bodies)) {
    writeFileSync(join(bin, cmd), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, cmd), 0o755);
  }
  process.env.PATH = `${bin}:${savedPath}`;
}

/** The coordinator's identity for a task's rollouts, its evaluator as given (another numpy than this machine's). */
const coordinatorIdentity = (task: DiscoveryTask, evaluator: EvaluatorRuntime): Omit<IdentityParts, "sampling" | "harness"> => ({
  task: { id: task.id, content: taskContentHash(task), metric: task.metric, direction: task.direction, evaluator },
  executor: { endpoint: "offline", model: "offline", dialect: "vllm" },
  budget: { maxEvals: 1, timeoutSec: task.timeoutSec },
  hone: HONE_VERSION,
});

/** Records the rollout in `dir` under `base` into a fresh run's hone.db; the identity it was recorded with. */
function recordedIdentity(dir: string, base: Omit<IdentityParts, "sampling" | "harness">): IdentityParts {
  const runDir = tempDir();
  createRunDb(join(runDir, "hone.db"), "optimize", {});
  const db = openDb(join(runDir, "hone.db"));
  try {
    const row = { runId: "run", round: 1, candidateId: "c", kind: "candidate" as const, id: "r01-k0", dir, seed: 0 };
    recordRollout(db, runDir, row, base);
    const { identity } = db.prepare("SELECT identity FROM rollouts WHERE id = 'r01-k0'").get() as { identity: string };
    return JSON.parse(identity) as IdentityParts;
  } finally {
    db.close();
  }
}

describe("a rollout on Slurm", () => {
  it("of a task with a python_path runs, named by the task's content hash, and its identity names the node's evaluator", {
    timeout: 180_000,
  }, async () => {
    fakeSlurm();
    const task = taskWithPythonPath();
    const runDir = join(tempDir(), "run");
    // As a run makes it.
    const runner = (await remoteRunner({
      slurm: {},
      runKey: "k",
      runDir,
      task,
      taskRef: task.dir,
      executor: { model: "offline" },
      recording: { import: () => undefined },
    })) as SlurmRunner;
    const job = seedRollout(task, "r01-k0", join(runDir, "rollouts", "r01-k0"));
    const results: RolloutJobResult[] = [];
    for await (const r of runner.run([job])) results.push(r);
    // With its outcome, as the local pool gives it (read from the rollout it wrote).
    expect(results).toEqual([{ id: "r01-k0", outcome: expect.objectContaining({ evaluations: expect.any(Object) }) }]);
    expect(existsSync(join(job.outDir, "result.json"))).toBe(true);
    const data = JSON.parse(readFileSync(join(runDir, "slurm", "r01-k0", "job.json"), "utf8")) as RolloutJobData;
    expect(data.task.contentHash).toBe(taskContentHash(task));
    expect("evaluator" in data).toBe(false);
    // The node reported what it measured under; the coordinator's records name it, not their own.
    const node = readEvaluatorFile(job.outDir);
    expect(node).toEqual(await runtimeHere(task));
    expect(node?.python).toMatch(/^\d+\.\d+/);
    const coordinator = { python: "3.99.0", numpy: "0.0.1", sandbox: "none" as const };
    expect(recordedIdentity(job.outDir, coordinatorIdentity(task, coordinator)).task.evaluator).toEqual(node);
  });
});

describe("a worker whose evaluator differs from the coordinator's", () => {
  const caches = new WorkerCaches(1);
  afterAll(() => caches.close());
  const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
  const data = () => {
    const job = seedRollout(task, "r01-k0", join(tempDir(), "r01-k0"));
    const o = { runKey: "k", taskRef: task.dir, taskHash: taskContentHash(task), executor: { model: "offline" } };
    return { ...toJobData(job, o), recordsBeside: true as const };
  };

  it("runs the job, reports its own runtime with the rollout, and the rollout's identity names it", {
    timeout: 120_000,
  }, async () => {
    const ours = await runtimeHere(task);
    if (!ours) throw new Error("this machine's evaluator runtime cannot be told");
    const d = data();
    expect("evaluator" in d).toBe(false);
    const r = await executeJobData(d, caches, "worker w");
    expect(r.error).toBeUndefined();
    expect(JSON.parse(r.files[EVALUATOR_FILE] as string)).toEqual(ours);
    const outDir = join(tempDir(), "r01-k0");
    placeRollout(r.files, outDir);
    // The coordinator runs another numpy (and Python, and no sandbox): its records name the worker's for this rollout.
    const coordinator = { python: "3.99.0", numpy: "0.0.1", sandbox: "none" as const };
    const identity = recordedIdentity(outDir, coordinatorIdentity(task, coordinator));
    expect(identity.task.evaluator).toEqual(ours);
    expect(identity.task.evaluator?.numpy).not.toBe("0.0.1");
  });

  it("a rollout that reports no runtime, or a malformed one, keeps the coordinator's", { timeout: 120_000 }, async () => {
    const coordinator = { python: "3.99.0", numpy: "0.0.1", sandbox: "none" as const };
    const r = await executeJobData(data(), caches, "worker w");
    const { [EVALUATOR_FILE]: _reported, ...files } = r.files;
    const plain = join(tempDir(), "r01-k0");
    placeRollout(files, plain);
    expect(recordedIdentity(plain, coordinatorIdentity(task, coordinator)).task.evaluator).toEqual(coordinator);
    const bad = join(tempDir(), "r01-k0");
    placeRollout({ ...files, [EVALUATOR_FILE]: JSON.stringify({ python: "3.12\n; rm", numpy: 7 }) }, bad);
    expect(recordedIdentity(bad, coordinatorIdentity(task, coordinator)).task.evaluator).toEqual(coordinator);
  });

  it("a job's queue id does not depend on the coordinator's evaluator (a restarted coordinator finds its jobs)", () => {
    const d = data();
    expect(Object.keys(d)).not.toContain("evaluator");
    expect(queueJobId("k", d)).toBe(queueJobId("k", data()));
  });
});

describe("a rollout queued for BullMQ workers", () => {
  it("comes back with the worker's evaluator runtime beside its files", { timeout: 120_000 }, async (ctx) => {
    if (missing("redis-server")) return requireTool(ctx, "redis-server");
    const redis = await fileRedis(13); // a database of this file's own
    const { BullmqRunner } = await import("../../src/loop/distributed/bullmq.ts");
    const { startWorker } = await import("../../src/loop/distributed/bullmq-worker.ts");
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const worker = await startWorker({ url: redis.url, concurrency: 1, onEvent: () => undefined });
    const runner = new BullmqRunner({
      url: redis.url,
      runKey: `probe4-${Date.now()}`,
      task,
      taskRef: task.dir,
      executor: { model: "offline" },
      attempts: 1,
    });
    try {
      const job = seedRollout(task, "r01-k0", join(tempDir(), "r01-k0"));
      const results: RolloutJobResult[] = [];
      for await (const r of runner.run([job])) results.push(r);
      // With its outcome, as the local pool gives it (read from the rollout it wrote).
      expect(results).toEqual([{ id: "r01-k0", outcome: expect.objectContaining({ evaluations: expect.any(Object) }) }]);
      expect(readEvaluatorFile(job.outDir)).toEqual(await runtimeHere(task));
    } finally {
      await runner.close();
      await worker.close();
      await redis.stop();
    }
  });
});

describe("a `hone run` rollout on a remote runner", () => {
  it("keeps the runtime the remote machine reported in the run's folder, where its record reads it", async () => {
    const { remoteRollout } = await import("../../src/loop/run-remote.ts");
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const reported = { python: "3.11.2", numpy: "1.26.4", sandbox: "bubblewrap" as const };
    // A remote runner that leaves what a worker's rollout leaves.
    const runner = {
      async *run(jobs: { id: string; outDir: string }[]): AsyncIterable<RolloutJobResult> {
        for (const j of jobs) {
          const result = { status: "completed", evaluations: { used: 1 }, usage: { model_calls: 0 } };
          placeRollout(
            { "result.json": JSON.stringify(result), "trajectory.jsonl": "", [EVALUATOR_FILE]: JSON.stringify(reported) },
            j.outDir,
          );
          yield { id: j.id };
        }
      },
      close: async () => undefined,
    };
    const partial = tempDir();
    const { outDir: _o, id: _i, ...job } = seedRollout(task, "rollout", join(tempDir(), "rollout"));
    const recording = { import: () => undefined } as unknown as Parameters<typeof remoteRollout>[2]["recording"];
    await remoteRollout(runner, job, { partial, task, recording });
    expect(readEvaluatorFile(partial)).toEqual(reported);
  });
});

describe("the receipt of a run whose rollouts were measured under two evaluators", () => {
  it("names each with its count of rollouts", async () => {
    const { formatReceipt, runReceipt } = await import("../../src/loop/receipt.ts");
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const coordinator = { python: "3.11.2", numpy: "1.26.4", sandbox: "bubblewrap" as const };
    const worker = { python: "3.11.9", numpy: "2.0.1", sandbox: "none" as const };
    const runDir = tempDir();
    createRunDb(join(runDir, "hone.db"), "optimize", {});
    const db = openDb(join(runDir, "hone.db"));
    const result = { status: "completed", evaluations: { used: 1, invalid: 0 }, usage: { model_calls: 0 } };
    const rollout = (id: string, reported?: EvaluatorRuntime) => {
      const dir = join(runDir, "rollouts", id);
      const files = { "result.json": JSON.stringify(result), "trajectory.jsonl": "" };
      placeRollout(reported ? { ...files, [EVALUATOR_FILE]: JSON.stringify(reported) } : files, dir);
      const row = { runId: "run", round: 1, candidateId: "c", kind: "candidate" as const, id, dir, seed: 0 };
      recordRollout(db, runDir, row, coordinatorIdentity(task, coordinator));
    };
    try {
      rollout("r01-k0", worker);
      rollout("r01-k1", worker);
      rollout("r01-k2");
    } finally {
      db.close();
    }
    const receipt = runReceipt(runDir);
    expect(receipt.evaluators).toEqual([
      { evaluator: worker, rollouts: 2 },
      { evaluator: coordinator, rollouts: 1 },
    ]);
    expect(formatReceipt(receipt)).toContain(
      "rollouts measured under 2 evaluators: Python 3.11.9, numpy 2.0.1, without bubblewrap (2 rollouts); Python 3.11.2, numpy 1.26.4, sealed by bubblewrap (1 rollout)",
    );
  });
  it("shows a sent run's versions escaped and lists at most five evaluators by name", async () => {
    const { formatReceipt, runReceipt } = await import("../../src/loop/receipt.ts");
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const runDir = tempDir();
    createRunDb(join(runDir, "hone.db"), "optimize", {});
    const db = openDb(join(runDir, "hone.db"));
    const result = { status: "completed", evaluations: { used: 1, invalid: 0 }, usage: { model_calls: 0 } };
    try {
      for (let i = 0; i < 7; i++) {
        const id = `r01-k${i}`;
        const dir = join(runDir, "rollouts", id);
        placeRollout({ "result.json": JSON.stringify(result), "trajectory.jsonl": "" }, dir);
        const row = { runId: "run", round: 1, candidateId: "c", kind: "candidate" as const, id, dir, seed: 0 };
        const hostile = { python: `3.11.${i}\u001b[2J`, numpy: "1.26.4\u0007", sandbox: "none" as const };
        recordRollout(db, runDir, row, coordinatorIdentity(task, hostile));
      }
    } finally {
      db.close();
    }
    const text = formatReceipt(runReceipt(runDir));
    expect(text).not.toMatch(/[\u001b\u0007]/);
    expect(text).toContain("Python 3.11.0\\u001b[2J");
    expect(text).toContain("rollouts measured under 7 evaluators: ");
    expect(text).toContain("; and 2 more");
  });
});
