import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { compareRecords } from "../../src/loop/compare-runs.ts";
import { openDb } from "../../src/store/db.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { copyOf, GSM8K_FIXTURE, ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { ciRedisUrl, freePort } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// Real engines: a redis-server on a loopback port (installed by .ci/run) and `hone worker` processes. Without
// redis-server every test here is skipped with the reason.

/** Whether a Redis answers PING at this URL. */
const pong = (u: URL) =>
  new Promise<boolean>((resolve) => {
    const s = connect(Number(u.port), u.hostname);
    let got = "";
    s.on("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => {
      got += d;
      if (got.includes("\r\n")) {
        s.destroy();
        resolve(got.startsWith("+PONG"));
      }
    });
    s.on("error", () => resolve(false));
  });

async function waitForRedis(url: string): Promise<void> {
  const u = new URL(url);
  for (let i = 0; i < 200; i++) {
    if (await pong(u)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no Redis answers at ${url}`);
}

let redis: ChildProcess | undefined;
let url = "";
const workers: ChildProcess[] = [];
/** Every line any worker printed: workers started by one test also take jobs queued by a later one. */
const allWorkerLines: string[] = [];

/** Starts `hone worker` and resolves once it says it is ready (its first line). */
function startWorker(log: string[]): Promise<ChildProcess> {
  const w = spawn(
    process.execPath,
    [join(ROOT, "bin", "hone.js"), "worker", "--queue", url, "--concurrency", "2", "--lock-duration-ms", "2000"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  workers.push(w);
  return new Promise((resolve, reject) => {
    w.stdout?.on("data", (d) => {
      const lines = String(d).trim().split("\n");
      log.push(...lines);
      allWorkerLines.push(...lines);
      if (lines.some((l) => / ready on /.test(l))) resolve(w);
    });
    w.on("close", (code) => reject(new Error(`hone worker exited with ${code} before it was ready`)));
  });
}

beforeAll(async () => {
  if (missing("redis-server")) return;
  // .ci/run starts a redis-server on a loopback port and names it here; elsewhere the test starts its own.
  const ci = ciRedisUrl(1); // a database of this file's own: the other distributed file may run at once
  if (ci) url = ci;
  else {
    const port = await freePort();
    redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: "ignore",
    });
    url = `redis://127.0.0.1:${port}`;
  }
  await waitForRedis(url);
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

/** Stops a process with SIGTERM and resolves when it has exited. */
const stop = (w: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (w.exitCode !== null || w.signalCode !== null) return resolve();
    w.once("close", () => resolve());
    w.kill("SIGTERM");
  });

afterAll(async () => {
  // Workers stop on SIGTERM (returning the job in hand); the test Redis goes last.
  await Promise.all(workers.map(stop));
  if (redis) await stop(redis);
});

const ARGS = optimizeArgs({ rounds: 2, proposals: 3, maxEvals: 5, seed: 4 });
const records = (dir: string) => openDb(join(dir, "hone.db"), { readonly: true });

describe("rollouts on BullMQ workers over Redis", () => {
  it("gives the same records as the local pool, and survives a worker killed mid-job", { timeout: 180_000 }, async () => {
    const local = join(tempDir(), "local");
    expect((await hone([...ARGS, "--out", local])).code).toBe(0);

    const logA: string[] = [];
    const logB: string[] = [];
    const [a] = await Promise.all([startWorker(logA), startWorker(logB)]);

    const queued = join(tempDir(), "queued");
    const run = hone([...ARGS, "--queue", url, "--out", queued], { timeoutMs: 170_000 });
    // Kill worker A as soon as it has taken a job of round 1 (if worker B takes them all, nobody is killed: the
    // records must match either way).
    const tookRound1 = () => logA.some((l) => / runs r01-/.test(l));
    const killed = new Promise<void>((resolve) => {
      const check = () => {
        if (!tookRound1()) return;
        a.kill("SIGKILL");
        resolve();
      };
      a.stdout?.on("data", check);
      check();
    });
    const r = await run;
    if (tookRound1()) await killed;
    expect(r.code, r.stderr).toBe(0);
    expect(logB.some((l) => / runs /.test(l))).toBe(true);

    const x = records(local);
    const y = records(queued);
    const { differences, counts } = compareRecords(x, y);
    x.close();
    y.close();
    expect(differences).toEqual([]);
    expect(counts.rollouts).toBe(1 + 2 * 3);
  });

  it("a worker refuses a job whose task content differs from its own copy", { timeout: 60_000 }, async () => {
    const log: string[] = [];
    await startWorker(log);
    const { BullmqRunner } = await import("../../src/loop/distributed/bullmq.ts");
    // The coordinator's copy of the task has an edited evaluator; the worker resolves the original folder.
    const original = loadTaskFolder(join(ROOT, "tasks", "circle-packing"), { id: "circle-packing" });
    const edited = copyOf(original.dir);
    writeFileSync(join(edited, "evaluator.py"), `${readFileSync(join(edited, "evaluator.py"), "utf8")}\n# edited\n`);
    const runner = new BullmqRunner({
      url,
      runKey: `mismatch-${Date.now()}`,
      task: loadTaskFolder(edited),
      taskRef: original.dir,
      executor: { model: "offline" },
    });
    const start = { valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 };
    const results = [];
    for await (const r of runner.run([
      {
        id: "j1",
        harnessDir: join(ROOT, "harnesses", "initial"),
        startProgram: original.seedProgram,
        startEvaluation: start,
        seed: 1,
        maxEvals: 2,
        outDir: join(tempDir(), "j1"),
      },
    ]))
      results.push(r);
    await runner.close();
    expect(results[0]?.error).toMatch(/content hash .* refusing to measure a different task/);
  });
});

describe("QA tasks (hone eval, hone train) on BullMQ workers", () => {
  const data = tempDir("hone-data-");
  const EVAL = [
    "eval",
    "--harness",
    "harnesses/qa",
    "--benchmark",
    "gsm8k",
    "--split",
    "test",
    "--limit",
    "12",
    "--model",
    "offline",
  ];

  beforeAll(async () => {
    if (missing("redis-server")) return;
    cpSync(GSM8K_FIXTURE, join(data, "gsm8k"), { recursive: true });
    await Promise.all([startWorker([]), startWorker([])]);
  });

  it("hone eval gives the same per-task results and trajectories through the queue as on the local pool", {
    timeout: 120_000,
  }, async () => {
    const [localOut, queuedOut] = [join(tempDir(), "local"), join(tempDir(), "queued")];
    const local = await hone([...EVAL, "--data-dir", data, "--out", localOut, "--json"]);
    const queued = await hone([...EVAL, "--data-dir", data, "--out", queuedOut, "--json", "--queue", url]);
    expect(local.code, local.stderr).toBe(0);
    expect(queued.code, queued.stderr).toBe(0);
    const a = JSON.parse(local.stdout);
    const b = JSON.parse(queued.stdout);
    expect(b.results).toEqual(a.results);
    expect(b.accuracy).toBe(a.accuracy);
    expect(allWorkerLines.filter((l) => / runs QA task /.test(l)).length).toBeGreaterThanOrEqual(12);
    for (const r of a.results as { id: string }[]) {
      const read = (dir: string) =>
        readFileSync(join(dir, "trajectories", `${r.id}.jsonl`), "utf8").replace(/"(t|latency_ms)":[\d.]+,/g, "");
      expect(read(queuedOut)).toBe(read(localOut));
    }
  });

  it("hone train reaches the same decisions through the queue as on the local pool", { timeout: 120_000 }, async () => {
    const dir = tempDir();
    write(
      join(dir, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 10, data_dir: ${data}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\npatch_surface: ["prompt.md", "agent.yaml"]\n`,
    );
    const args = ["train", "--config", join(dir, "train.yaml"), "--epochs", "2", "--json"];
    const local = await hone([...args, "--out", join(dir, "local")]);
    const queued = await hone([...args, "--out", join(dir, "queued"), "--queue", url]);
    expect(local.code, local.stderr).toBe(0);
    expect(queued.code, queued.stderr).toBe(0);
    const strip = (out: string) =>
      (JSON.parse(out).epochs as Record<string, unknown>[]).map(
        ({ epoch, decision, reason, promoted, baseline_solved, candidate_solved }) => ({
          epoch,
          decision,
          reason,
          promoted,
          baseline_solved,
          candidate_solved,
        }),
      );
    expect(strip(queued.stdout)).toEqual(strip(local.stdout));
  });
});
