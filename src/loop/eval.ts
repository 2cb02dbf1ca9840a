import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadHarness } from "../harness/package.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { loadSplit, type QATask } from "../task/qa/benchmarks.ts";
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
  results: TaskResult[];
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
  const jobs: QAJob[] = tasks.map((task: QATask, i) => ({
    id: String(i),
    harnessDir,
    benchmark: o.benchmark,
    task,
    seed: (o.seed ?? 0) + i,
    trajectoryPath: outDir ? join(outDir, "trajectories", `${task.id}.jsonl`) : undefined,
  }));
  const pool =
    runner ??
    new LocalQARunner({ model: { ...o, model: o.model ?? "offline" } as ModelSettings, concurrency: o.concurrency ?? 8 });
  const results: TaskResult[] = new Array(tasks.length);
  let done = 0;
  try {
    for await (const r of pool.run(jobs)) {
      results[Number(r.id)] = r.result;
      o.onResult?.(r.result, ++done, tasks.length);
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
    failed: tasks.length - completed.length,
    metric: primaryMetric(scorer),
    metrics: Object.fromEntries(scorer.metrics.map((m) => [m, mean(m)])),
    accuracy: completed.length ? correct / completed.length : 0,
    ci95: wilson(correct, completed.length),
    meanScore: completed.length ? completed.reduce((a, r) => a + r.score, 0) / completed.length : 0,
    results,
  };
  if (outDir) writeFileSync(join(outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}
