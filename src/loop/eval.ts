import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadHarness } from "../harness/package.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { loadSplit, type QATask } from "../task/qa/benchmarks.ts";
import { meanOver, passAtK, passHatK } from "../task/qa/code/pass-at-k.ts";
import { officialScorer, primaryMetric } from "../task/qa/score-answer.ts";
import { LocalQARunner, type QAJob, type QARunner } from "./qa-runner.ts";
import type { TaskResult } from "./qa-task.ts";

export { questionMessage, solveTask, type TaskResult } from "./qa-task.ts";

export interface EvalSummary {
  benchmark: string;
  split: string;
  harness: { name: string; content_hash: string };
  tasks: number;
  completed: number;
  failed: number;
  /** The benchmark's primary 0/1 metric, behind `accuracy` and its interval. */
  metric: string;
  /** Each official metric's mean over the completed tasks, by its published name. */
  metrics: Record<string, number>;
  accuracy: number;
  ci95: [number, number];
  meanScore: number;
  /** Samples per task (`--samples`); with more than one, every sample is a row of `results`. */
  samples: number;
  /** pass@k from the samples (the unbiased estimator), k = 1, 10, 100 up to the number of samples. */
  passAtK: Record<string, number>;
  /** τ-bench's pass^k from the samples (trials), k = 1 … the number of samples. */
  passHatK: Record<string, number>;
  results: TaskResult[];
}

/** Per task, how many samples completed and how many of those were correct (results in task-major order). */
function counts(results: TaskResult[], n: number): { n: number; c: number }[] {
  const out: { n: number; c: number }[] = [];
  for (let i = 0; i < results.length; i += n) {
    const done = results.slice(i, i + n).filter((r) => r.status === "completed");
    if (done.length) out.push({ n: done.length, c: done.filter((r) => r.correct).length });
  }
  return out;
}

function estimates(results: TaskResult[], n: number): Pick<EvalSummary, "passAtK" | "passHatK"> {
  const per = counts(results, n);
  const most = Math.min(n, ...per.map((t) => t.n));
  const ks = (list: number[]) => list.filter((k) => per.length > 0 && k <= most);
  return {
    passAtK: Object.fromEntries(ks([1, 10, 100]).map((k) => [`pass@${k}`, meanOver(per, k, passAtK)])),
    passHatK: Object.fromEntries(
      ks(Array.from({ length: n }, (_, i) => i + 1)).map((k) => [`pass^${k}`, meanOver(per, k, passHatK)]),
    ),
  };
}

/** Wilson score interval for a proportion (95%). */
export function wilson(successes: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 0];
  const p = successes / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export interface EvalOptions extends Partial<ModelSettings> {
  harnessDir: string;
  benchmark: string;
  split: "train" | "validation" | "test";
  limit?: number;
  dataDir?: string;
  concurrency?: number;
  seed?: number;
  outDir?: string;
  /** Samples per task (default 1), for pass@k and pass^k; each at its own sampling seed. */
  samples?: number;
  /** The simulated user of conversation benchmarks (τ-bench): `--user-model`; the executor's model when unset. */
  userModel?: ModelSettings;
  onResult?: (r: TaskResult, done: number, total: number) => void;
}

/**
 * `hone eval`: a harness on a benchmark split, each task scored by the benchmark's official rule. Tasks run through a
 * runner (the local pool unless one is given, e.g. BullMQ workers); the summary does not depend on which.
 */
export async function evaluateBenchmark(o: EvalOptions, runner?: QARunner): Promise<EvalSummary> {
  const harnessDir = resolve(o.harnessDir);
  const harness = loadHarness(harnessDir);
  const tasks = await loadSplit(o.benchmark, o.split, { dir: o.dataDir, seed: o.seed, limit: o.limit });
  const outDir = o.outDir ? resolve(o.outDir) : undefined;
  if (outDir) mkdirSync(join(outDir, "trajectories"), { recursive: true });
  const n = Math.max(1, o.samples ?? 1);
  const jobs: QAJob[] = tasks.flatMap((task: QATask, i) =>
    Array.from({ length: n }, (_, s) => ({
      id: String(i * n + s),
      harnessDir,
      benchmark: o.benchmark,
      task,
      seed: (o.seed ?? 0) + i + s * 1_000_003,
      trajectoryPath: outDir ? join(outDir, "trajectories", `${task.id}${s ? `.sample${s}` : ""}.jsonl`) : undefined,
    })),
  );
  const pool =
    runner ??
    new LocalQARunner({
      model: { ...o, model: o.model ?? "offline" } as ModelSettings,
      concurrency: o.concurrency ?? 8,
      userModel: o.userModel,
    });
  const results: TaskResult[] = new Array(jobs.length);
  let done = 0;
  try {
    for await (const r of pool.run(jobs)) {
      results[Number(r.id)] = r.result;
      o.onResult?.(r.result, ++done, jobs.length);
    }
  } finally {
    if (!runner) await pool.close();
  }
  const completed = results.filter((r) => r.status === "completed");
  const correct = completed.filter((r) => r.correct).length;
  const scorer = officialScorer(o.benchmark);
  const mean = (name: string) =>
    completed.length ? completed.reduce((a, r) => a + (r.metrics?.[name] ?? 0), 0) / completed.length : 0;
  const summary: EvalSummary = {
    benchmark: o.benchmark,
    split: o.split,
    harness: { name: harness.name, content_hash: harness.contentHash },
    tasks: tasks.length,
    completed: completed.length,
    failed: jobs.length - completed.length,
    metric: primaryMetric(scorer),
    metrics: Object.fromEntries(scorer.metrics.map((m) => [m, mean(m)])),
    accuracy: completed.length ? correct / completed.length : 0,
    ci95: wilson(correct, completed.length),
    meanScore: completed.length ? completed.reduce((a, r) => a + r.score, 0) / completed.length : 0,
    samples: n,
    ...estimates(results, n),
    results,
  };
  if (outDir) writeFileSync(join(outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}
