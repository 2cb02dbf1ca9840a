// 32 rollouts at concurrency 32 and at 1, side by side in each repetition: the speed-up against the ideal 32x.
// As a run meets them: the model is the offline model served by `hone serve-offline --latency-ms 200` in a
// process of its own (an endpoint, not a thread of this process), and every evaluation is the real circle-packing
// evaluator in the warm pool (sandboxed, as `hone optimize` sizes it: one evaluator per 8 rollouts, at most 4).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { DEFAULT_HARNESS } from "../src/loop/run.ts";
import { LocalRunner, type RolloutJob } from "../src/loop/runner.ts";
import { resolveModel } from "../src/model/resolve.ts";
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import { EvaluatorPool } from "../src/task/evaluator-pool.ts";
import { report, spread } from "./lib.ts";

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 32);
const REPS = Number(process.env.BENCH_REPS ?? 2);
const LATENCY_MS = 200;
const MAX_EVALS = 2;
const HONE = join(import.meta.dirname, "..", "bin", "hone.js");

/** `hone serve-offline` in its own process; resolves with its base URL and a way to stop it. */
function serveOffline(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, [HONE, "serve-offline", "--port", "0", "--latency-ms", String(LATENCY_MS)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`hone serve-offline exited ${code}`)));
    createInterface({ input: child.stdout }).once("line", (line) => {
      const url = /serving at (\S+)/.exec(line)?.[1];
      if (!url) reject(new Error(`unexpected first line: ${line}`));
      else resolve({ url, stop: () => child.kill("SIGTERM") });
    });
  });
}

export async function benchRolloutConcurrency(): Promise<boolean> {
  const task = loadTaskFolder(`${BUILTIN_TASKS_DIR}/circle-packing`, { id: "circle-packing" });
  const server = await serveOffline();
  const model = await resolveModel({ model: "offline", baseUrl: server.url });
  const pool = await EvaluatorPool.start(task, { size: Math.min(4, Math.ceil(ROLLOUTS / 8)) });
  const start = await pool.evaluate(task.seedProgram);
  const dir = mkdtempSync(join(tmpdir(), "hone-bench-rollouts-"));
  let evaluations = 0;
  const time = async (concurrency: number, rep: number) => {
    const jobs: RolloutJob[] = Array.from({ length: ROLLOUTS }, (_, i) => ({
      id: `r${rep}-c${concurrency}-${i}`,
      harnessDir: DEFAULT_HARNESS,
      startProgram: task.seedProgram,
      startEvaluation: start,
      seed: i,
      maxEvals: MAX_EVALS,
      outDir: join(dir, `r${rep}-c${concurrency}-${i}`),
    }));
    const evaluate = (p: string) => {
      evaluations++;
      return pool.evaluate(p);
    };
    const runner = new LocalRunner({ task, model: model.model, evaluate, concurrency });
    const t = performance.now();
    let calls = 0;
    for await (const r of runner.run(jobs)) {
      if (r.error) throw new Error(r.error);
      calls += r.outcome?.usage.model_calls ?? 0;
    }
    return { seconds: (performance.now() - t) / 1000, calls };
  };
  const parallel: number[] = [];
  const serial: number[] = [];
  let calls = 0;
  for (let r = 0; r < REPS; r++) {
    const p = await time(ROLLOUTS, r);
    const s = await time(1, r);
    parallel.push(p.seconds);
    serial.push(s.seconds);
    calls = p.calls;
  }
  pool.close();
  await model.close();
  server.stop();
  rmSync(dir, { recursive: true, force: true });
  const share = serial.map((s, i) => s / (parallel[i] as number) / ROLLOUTS);
  return report(
    `rollout concurrency (issue 19): ${ROLLOUTS} rollouts of ${MAX_EVALS} evaluations, model served in its own process (+${LATENCY_MS} ms per call), the real evaluator in the warm pool; ${REPS} repetitions, ${calls} model calls and ${evaluations} evaluations in all`,
    [
      [`concurrency ${ROLLOUTS}`, spread(parallel, " s", 2)],
      ["concurrency 1", spread(serial, " s", 2)],
      [
        "speed-up",
        spread(
          serial.map((s, i) => s / (parallel[i] as number)),
          "x",
          1,
        ),
      ],
    ],
    [{ goal: { figure: `share of the ideal ${ROLLOUTS}x speed-up`, op: ">=", value: 0.85, unit: "" }, samples: share }],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRolloutConcurrency();
