// A QA task solved by a harness program (HarnessGrad's contract): the program gets the question (never the gold),
// leaves its answer in answer.txt, and hone scores it by the benchmark's official rule.
import type { ProgramHarness } from "../harness/program.ts";
import type { ChatModel } from "../model/types.ts";
import { runProgramHarness } from "../runtime/program-harness.ts";
import { modelNameOf } from "../runtime/program-rollout.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { benchmark, type QATask } from "../task/qa/benchmarks.ts";
import { primaryMetric } from "../task/qa/score-answer.ts";
import type { TaskResult } from "./qa-task.ts";

/**
 * Runs the program on one question and scores answer.txt. A program that fails, times out or leaves no answer has
 * answered nothing (score 0, its error kept); only a benchmark the contract cannot carry (a conversation) throws.
 */
export async function solveWithProgram(
  program: ProgramHarness,
  model: ChatModel,
  benchmarkId: string,
  task: QATask,
  trajectory: TrajectorySink,
): Promise<TaskResult> {
  const b = benchmark(benchmarkId);
  if (b.conversation)
    throw new Error(`${program.dir}: a harness program answers one question; ${benchmarkId} is a conversation with a user`);
  const run = await runProgramHarness(
    program,
    { kind: "qa", id: task.id, question: task.question, answer_format: b.answerFormat },
    {},
    model,
    modelNameOf(model),
    trajectory,
  );
  const answer = run.output ?? "";
  const metrics = await b.scorer.apply(answer, task.gold);
  const correct = metrics[primaryMetric(b.scorer)] === 1;
  const score = metrics[b.scorer.score] as number;
  const extracted = b.scorer.extract(answer);
  trajectory.write({ type: "scored", correct, score, extracted, metrics });
  const base = { id: task.id, modelCalls: run.modelCalls, tokens: run.tokens, status: "completed" as const };
  return { ...base, correct, score, extracted, answer, metrics, ...(run.error ? { error: run.error } : {}) };
}
