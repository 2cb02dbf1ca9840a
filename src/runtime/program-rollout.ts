// A discovery rollout of a harness program (HarnessGrad's contract): the program gets the task and the starting
// program in its work folder and edits it; after it exits hone evaluates what it left, once, within the budget.
import type { ProgramHarness } from "../harness/program.ts";
import { addUsage, type ChatModel, type Usage, zeroUsage } from "../model/types.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { assertFrozenUnchanged, EditError, MAX_PROGRAM_CHARS } from "../task/evolve-block.ts";
import { DiscoveryEnvironment } from "./discovery-env.ts";
import { type ProgramRun, runProgramHarness } from "./program-harness.ts";
import { endRollout, evaluationWriter, type RolloutOptions, type RolloutOutcome } from "./rollout.ts";

/** The model's name as an endpoint knows it (a ChatModel's id is `<base url>#<model>`): what HONE_MODEL says. */
export const modelNameOf = (model: ChatModel) => model.id.slice(model.id.lastIndexOf("#") + 1);

/** The trajectory with the program's model calls summed on the way (prompt and completion tokens apart). */
function counting(sink: TrajectorySink): { sink: TrajectorySink; usage: Usage } {
  const usage = zeroUsage();
  return {
    usage,
    sink: {
      write: (e) => {
        if (e.type === "model_call" && e.usage) addUsage(usage, e.usage as Usage);
        sink.write(e);
      },
    },
  };
}

/** Why what the program left cannot be evaluated (edited outside the EVOLVE block, too large), or undefined. */
function refusal(start: string, left: string): string | undefined {
  if (left.length > MAX_PROGRAM_CHARS) return `the program it left is larger than ${MAX_PROGRAM_CHARS} characters`;
  try {
    assertFrozenUnchanged(start, left);
    return undefined;
  } catch (err) {
    if (err instanceof EditError) return err.message;
    throw err;
  }
}

/**
 * Runs the program sealed (runProgramHarness), then evaluates the program file it left once, when the budget allows
 * and the EVOLVE-block rules hold. A program that fails, times out or breaks the rules leaves the starting program as
 * the best (the failure is in the trajectory and the outcome's error); only a failed model call fails the rollout.
 */
export async function runProgramRollout(o: RolloutOptions, program: ProgramHarness): Promise<RolloutOutcome> {
  const started = performance.now();
  const startProgram = o.startProgram ?? o.task.seedProgram;
  const timeoutSec = Math.min(program.timeoutSec, o.timeLimitSec ?? program.timeoutSec);
  const env = new DiscoveryEnvironment({
    task: o.task,
    startProgram,
    startEvaluation: o.startEvaluation,
    maxEvals: o.maxEvals,
    evaluate: o.evaluate,
    onEvaluation: evaluationWriter(o),
  });
  o.trajectory.write({
    type: "rollout_start",
    harness: { name: program.name, content_hash: program.contentHash },
    task: { id: o.task.id, metric: o.task.metric, direction: o.task.direction },
    model: o.model.id,
    sampling: { seed: o.seed },
    seed: o.seed,
    max_evals: o.maxEvals,
    time_limit_sec: timeoutSec,
    start_score: o.startEvaluation?.valid ? o.startEvaluation.score : null,
  });
  const calls = counting(o.trajectory);
  const run: ProgramRun = await runProgramHarness(
    { ...program, timeoutSec },
    {
      kind: "discovery",
      id: o.task.id,
      description: o.task.description,
      program_file: `program${o.task.programExtension}`,
      metric: o.task.metric,
      direction: o.task.direction,
    },
    { program: startProgram },
    o.model,
    modelNameOf(o.model),
    calls.sink,
  );
  let error = run.error;
  if (run.status === "completed" && run.output !== undefined) {
    const refused = refusal(startProgram, run.output);
    if (refused) {
      error = `what the harness program left is not evaluated: ${refused}`;
      o.trajectory.write({ type: "harness_program_refused", reason: refused });
    } else {
      env.program = run.output;
      if (!(await env.evaluateCurrent())) error = "the evaluator budget is 0: what the harness program left is not evaluated";
    }
  }
  const valid = env.records.filter((r) => r.evaluation.valid).length;
  const timedOut = /did not finish within/.test(run.error ?? "");
  const outcome: RolloutOutcome = {
    status: "completed",
    stopReason: timedOut ? "time_limit" : "finish",
    error,
    startScore: o.startEvaluation?.valid ? o.startEvaluation.score : undefined,
    bestScore: env.best?.score,
    bestProgram: env.best?.program ?? startProgram,
    improved: env.best !== undefined && env.best.index > 0,
    bestEvaluationIndex: env.best && env.best.index > 0 ? env.best.index : undefined,
    evaluations: { used: env.used, valid, invalid: env.used - valid, budget: o.maxEvals },
    usage: {
      ...calls.usage,
      model_calls: run.modelCalls,
      seconds: (performance.now() - started) / 1000,
    },
    iterations: run.modelCalls,
  };
  return endRollout(o, outcome);
}
