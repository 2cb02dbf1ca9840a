// 32 rollouts against the offline model with 200 ms added latency per call, at concurrency 32 and at 1, side by
// side: the speed-up over the ideal of 32. The evaluator is a cheap in-process function, so the figure measures
// hone's rollout engine (HTTP client, agent loop, middleware, trajectories), not Python.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_HARNESS } from "../src/loop/run.ts";
import { LocalRunner, type RolloutJob } from "../src/loop/runner.ts";
import { resolveModel } from "../src/model/resolve.ts";
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import type { Evaluation } from "../src/task/evaluation.ts";
import { report } from "./lib.ts";

const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 32);
const LATENCY_MS = 200;
const MAX_EVALS = 2;

export async function benchRolloutConcurrency(): Promise<void> {
  const task = loadTaskFolder(`${BUILTIN_TASKS_DIR}/circle-packing`, { id: "circle-packing" });
  const model = await resolveModel({ model: "offline", offlineLatencyMs: LATENCY_MS });
  const evaluate = async (p: string): Promise<Evaluation> => ({
    valid: true,
    score: p.length % 97,
    metrics: {},
    artifacts: {},
    seconds: 0,
  });
  const start: Evaluation = { valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 };
  const dir = mkdtempSync(join(tmpdir(), "hone-bench-rollouts-"));
  const time = async (concurrency: number) => {
    const jobs: RolloutJob[] = Array.from({ length: ROLLOUTS }, (_, i) => ({
      id: `c${concurrency}-${i}`,
      harnessDir: DEFAULT_HARNESS,
      startProgram: task.seedProgram,
      startEvaluation: start,
      seed: i,
      maxEvals: MAX_EVALS,
      outDir: join(dir, `c${concurrency}-${i}`),
    }));
    const runner = new LocalRunner({ task, model: model.model, evaluate, concurrency });
    const t = performance.now();
    let calls = 0;
    for await (const r of runner.run(jobs)) {
      if (r.error) throw new Error(r.error);
      calls += r.outcome?.usage.model_calls ?? 0;
    }
    return { seconds: (performance.now() - t) / 1000, calls };
  };
  const parallel = await time(ROLLOUTS);
  const serial = await time(1);
  await model.close();
  rmSync(dir, { recursive: true, force: true });
  const speedup = serial.seconds / parallel.seconds;
  report(
    `rollout concurrency (issue 5): ${ROLLOUTS} rollouts, offline model +${LATENCY_MS} ms per call, ${MAX_EVALS} evaluations each`,
    [
      [`concurrency ${ROLLOUTS}`, `${parallel.seconds.toFixed(2)} s (${parallel.calls} model calls)`],
      ["concurrency 1", `${serial.seconds.toFixed(2)} s (${serial.calls} model calls)`],
      ["speed-up", `${speedup.toFixed(1)}x of an ideal ${ROLLOUTS}x (${((speedup / ROLLOUTS) * 100).toFixed(0)}%)`],
    ],
    { ok: speedup >= 0.85 * ROLLOUTS, text: `target: at least 0.85 of ${ROLLOUTS}x on this 2-core machine` },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchRolloutConcurrency();
