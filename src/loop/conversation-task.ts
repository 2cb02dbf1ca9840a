import type { Harness } from "../harness/types.ts";
import type { ChatModel } from "../model/types.ts";
import { runConversation } from "../runtime/conversation.ts";
import { toToolDefinition } from "../runtime/environment.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { benchmark, type QATask } from "../task/qa/benchmarks.ts";
import type { TaskResult } from "./qa-task.ts";

/** Which oracle `oracle_answer` is (its binding), or none for a harness without it. */
function oracleKind(harness: Harness): "gold" | "wrong" | undefined {
  const tool = harness.tools.find((t) => t.name === "oracle_answer");
  if (!tool) return undefined;
  if (tool.binding === "hone:wrong-answer") return "wrong";
  if (tool.binding === undefined || tool.binding === "hone:gold-answer") return "gold";
  throw new Error(`oracle_answer's binding is "${tool.binding}"; hone knows hone:gold-answer and hone:wrong-answer`);
}

/**
 * One task of a conversation benchmark (τ-bench): its world opened, the harness talking with the simulated user (the
 * user model, the offline model unless --user-model names another), the benchmark's reward at the end. A conversation
 * the benchmark would not call ended (the iteration cap, the time limit) scores 0, as in τ-bench; a model error fails.
 */
export async function solveConversation(
  harness: Harness,
  model: ChatModel,
  userModel: ChatModel,
  benchmarkId: string,
  task: QATask,
  seed: number,
  trajectory: TrajectorySink,
): Promise<TaskResult> {
  const b = benchmark(benchmarkId);
  const conversation = b.conversation;
  if (!conversation) throw new Error(`${benchmarkId} is not a conversation benchmark`);
  const world = await conversation.open(task);
  try {
    const sampling = { ...harness.sampling, seed: harness.sampling.seed ?? seed };
    const r = await runConversation({
      harness,
      tools: harness.tools.map(toToolDefinition),
      model,
      userModel,
      world,
      instruction: conversation.instruction(task),
      oracleKind: oracleKind(harness),
      sampling,
      userSampling: { seed: sampling.seed },
      trajectory,
      deadline: performance.now() + harness.timeoutSec * 1000,
    });
    const base = {
      id: task.id,
      modelCalls: r.loop.modelCalls + r.userCalls,
      tokens: r.loop.usage.total_tokens + r.userUsage.total_tokens,
    };
    if (r.loop.stopReason === "model_error") return { ...base, status: "failed", correct: false, score: 0, error: r.loop.error };
    const record = r.ended ? await world.reward() : JSON.stringify({ reward: 0, ended: false, stop: r.loop.stopReason });
    const metrics = await b.scorer.apply(record, task.gold);
    const score = metrics[b.scorer.score] as number;
    trajectory.write({ type: "scored", correct: score === 1, score, metrics, reward: JSON.parse(record) });
    return { ...base, status: "completed", correct: score === 1, score, metrics, answer: record, extracted: String(score) };
  } finally {
    world.close();
  }
}
