import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadHarness } from "../harness/package.ts";
import type { Harness } from "../harness/types.ts";
import { type ModelSettings, resolveModel } from "../model/resolve.ts";
import type { ChatModel } from "../model/types.ts";
import { runAgentLoop } from "../runtime/agent-loop.ts";
import { toToolDefinition } from "../runtime/environment.ts";
import { QAEnvironment } from "../runtime/qa-env.ts";
import { JsonlTrajectory, MemoryTrajectory, type TrajectorySink } from "../store/trajectory.ts";
import { benchmark, loadSplit, type QATask } from "../task/qa/benchmarks.ts";

export interface TaskResult {
  id: string;
  status: "completed" | "failed";
  correct: boolean;
  score: number;
  extracted?: string;
  answer?: string;
  error?: string;
  detail?: Record<string, unknown>;
  modelCalls: number;
  tokens: number;
}

export interface EvalSummary {
  benchmark: string;
  split: string;
  harness: { name: string; content_hash: string };
  tasks: number;
  completed: number;
  failed: number;
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

export function questionMessage(benchmarkId: string, task: QATask): string {
  const format = benchmarkId === "math500" ? "\\boxed{answer}" : benchmarkId === "gsm8k" ? "#### <number>" : "a short answer";
  return `${task.question}\n\nGive your final answer in the form ${format}.`;
}

/** One QA task on one harness: the agent loop with the QA environment; the answer is scored by the official rule. */
export async function solveTask(
  harness: Harness,
  model: ChatModel,
  benchmarkId: string,
  task: QATask,
  seed: number,
  trajectory: TrajectorySink,
): Promise<TaskResult> {
  const b = benchmark(benchmarkId);
  const env = new QAEnvironment(() => b.answerFormat(task.gold));
  const loop = await runAgentLoop({
    harness,
    model,
    env,
    tools: harness.tools.map(toToolDefinition),
    taskMessage: questionMessage(benchmarkId, task),
    sampling: { ...harness.sampling, seed: harness.sampling.seed ?? seed },
    middlewares: [],
    trajectory,
    budget: () => ({ used: 0, left: 0, total: 0 }),
    deadline: performance.now() + harness.timeoutSec * 1000,
  });
  const base = { id: task.id, modelCalls: loop.modelCalls, tokens: loop.usage.total_tokens };
  if (loop.stopReason === "model_error") return { ...base, status: "failed", correct: false, score: 0, error: loop.error };
  const answer = env.answer ?? "";
  const s = b.score(answer, task.gold);
  trajectory.write({ type: "scored", correct: s.correct, score: s.score, extracted: s.extracted });
  return { ...base, status: "completed", correct: s.correct, score: s.score, extracted: s.extracted, answer, detail: s.detail };
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

/** `hone eval`: a harness on a benchmark split, each task scored by the benchmark's official rule. */
export async function evaluateBenchmark(o: EvalOptions): Promise<EvalSummary> {
  const harness = loadHarness(o.harnessDir);
  const tasks = loadSplit(o.benchmark, o.split, { dir: o.dataDir, seed: o.seed, limit: o.limit });
  const resolved = await resolveModel({ ...o, model: o.model ?? "offline" } as ModelSettings);
  const outDir = o.outDir ? resolve(o.outDir) : undefined;
  if (outDir) mkdirSync(join(outDir, "trajectories"), { recursive: true });
  const results: TaskResult[] = new Array(tasks.length);
  let next = 0;
  let done = 0;
  try {
    const worker = async () => {
      while (next < tasks.length) {
        const i = next++;
        const task = tasks[i] as QATask;
        const trajectory = outDir
          ? new JsonlTrajectory(join(outDir, "trajectories", `${task.id}.jsonl`))
          : new MemoryTrajectory();
        results[i] = await solveTask(harness, resolved.model, o.benchmark, task, (o.seed ?? 0) + i, trajectory);
        if (trajectory instanceof JsonlTrajectory) trajectory.close();
        o.onResult?.(results[i] as TaskResult, ++done, tasks.length);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 8) }, worker));
  } finally {
    await resolved.close();
  }
  const completed = results.filter((r) => r.status === "completed");
  const correct = completed.filter((r) => r.correct).length;
  const summary: EvalSummary = {
    benchmark: o.benchmark,
    split: o.split,
    harness: { name: harness.name, content_hash: harness.contentHash },
    tasks: tasks.length,
    completed: completed.length,
    failed: tasks.length - completed.length,
    accuracy: completed.length ? correct / completed.length : 0,
    ci95: wilson(correct, completed.length),
    meanScore: completed.length ? completed.reduce((a, r) => a + r.score, 0) / completed.length : 0,
    results,
  };
  if (outDir) writeFileSync(join(outDir, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}
