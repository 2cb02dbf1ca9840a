import type { Harness } from "../harness/types.ts";
import type { ChatModel } from "../model/types.ts";
import { runAgentLoop } from "../runtime/agent-loop.ts";
import { toToolDefinition } from "../runtime/environment.ts";
import { QAEnvironment } from "../runtime/qa-env.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { benchmark, type QATask } from "../task/qa/benchmarks.ts";
import { officialScorer } from "../task/qa/score-answer.ts";

export interface TaskResult {
  id: string;
  status: "completed" | "failed";
  correct: boolean;
  score: number;
  extracted?: string;
  answer?: string;
  error?: string;
  /** The benchmark's official metrics for this answer, by their published names. */
  metrics?: Record<string, number>;
  modelCalls: number;
  tokens: number;
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
  const scorer = officialScorer(benchmarkId);
  const metrics = scorer.apply(answer, task.gold);
  const correct = metrics[scorer.primary] === 1;
  const score = metrics[scorer.score] as number;
  const extracted = scorer.extract(answer);
  trajectory.write({ type: "scored", correct, score, extracted, metrics });
  return { ...base, status: "completed", correct, score, extracted, answer, metrics };
}
