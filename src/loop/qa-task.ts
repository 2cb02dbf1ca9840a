import type { Harness } from "../harness/types.ts";
import type { ChatModel } from "../model/types.ts";
import { runAgentLoop } from "../runtime/agent-loop.ts";
import { toToolDefinition } from "../runtime/environment.ts";
import { QAEnvironment } from "../runtime/qa-env.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { benchmark, type QATask } from "../task/qa/benchmarks.ts";
import { primaryMetric } from "../task/qa/score-answer.ts";
import { solveConversation } from "./conversation-task.ts";
import { solveWithProgram } from "./qa-program.ts";

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
  return `${task.question}\n\nGive your final answer as ${benchmark(benchmarkId).answerFormat}.`;
}

/** What `oracle_answer` submits: the gold in the benchmark's form, or with `binding: hone:wrong-answer` a wrong one. */
function oracleSubmission(harness: Harness, b: ReturnType<typeof benchmark>, task: QATask): () => string {
  const binding = harness.tools.find((t) => t.name === "oracle_answer")?.binding;
  if (binding === "hone:wrong-answer") return () => b.wrongAnswer(task.gold);
  if (binding === undefined || binding === "hone:gold-answer") return () => b.oracleAnswer(task.gold);
  throw new Error(`oracle_answer's binding is "${binding}"; hone knows hone:gold-answer and hone:wrong-answer`);
}

/** One QA task on one harness: the agent loop with the QA environment; the answer is scored by the official rule. */
export async function solveTask(
  harness: Harness,
  model: ChatModel,
  benchmarkId: string,
  task: QATask,
  seed: number,
  trajectory: TrajectorySink,
  userModel?: ChatModel,
): Promise<TaskResult> {
  if (harness.program) return solveWithProgram(harness.program, model, benchmarkId, task, trajectory);
  const b = benchmark(benchmarkId);
  if (b.conversation) return solveConversation(harness, model, userModel ?? model, benchmarkId, task, seed, trajectory);
  const env = new QAEnvironment(oracleSubmission(harness, b, task));
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
  const scorer = b.scorer;
  const metrics = await scorer.apply(answer, task.gold);
  const correct = metrics[primaryMetric(scorer)] === 1;
  const score = metrics[scorer.score] as number;
  const extracted = scorer.extract(answer);
  trajectory.write({ type: "scored", correct, score, extracted, metrics });
  return { ...base, status: "completed", correct, score, extracted, answer, metrics };
}
