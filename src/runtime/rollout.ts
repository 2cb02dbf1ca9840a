import type { Harness } from "../harness/types.ts";
import type { ChatModel, Usage } from "../model/types.ts";
import { jsonText } from "../store/atomic.ts";
import type { RolloutFiles } from "../store/rollout-files.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { hasEvolveMarkers } from "../task/evolve-block.ts";
import { runAgentLoop, type StopReason } from "./agent-loop.ts";
import { DiscoveryEnvironment, type Evaluate, type EvaluationRecord, WHOLE_PROGRAM_EDITABLE } from "./discovery-env.ts";
import { type Environment, type ToolOutcome, toToolDefinition } from "./environment.ts";
import type { Middleware } from "./middleware.ts";
import { builtinMiddlewares, type MiddlewareHost } from "./middlewares/index.ts";
import { modelOffered, type OfferedNames, offeredName } from "./offered-names.ts";
import { runProgramRollout } from "./program-rollout.ts";

export interface RolloutOptions {
  harness: Harness;
  task: DiscoveryTask;
  model: ChatModel;
  evaluate: Evaluate;
  maxEvals: number;
  seed: number;
  trajectory: TrajectorySink;
  /** Where each evaluated program and the best program are written (`store/rollout-files.ts`); omit to write none. */
  files?: RolloutFiles;
  startProgram?: string;
  startEvaluation?: Evaluation;
  timeLimitSec?: number;
  /** Hosts the harness's generated tools and middleware (the sandbox); required when the harness carries any. */
  generatedCode?: (env: DiscoveryEnvironment, trajectory: TrajectorySink) => GeneratedCode;
}

/** What the sandbox provides to a rollout: generated tools by name, generated middleware, and cleanup. */
export interface GeneratedCode {
  /** Generated tools by name; `signal` is aborted at the rollout's deadline, which ends a call still running. */
  tools: Map<string, (args: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolOutcome>>;
  middleware(config: Harness["middlewares"][number]): Middleware;
  dispose(): void;
}

export interface RolloutOutcome {
  status: "completed" | "failed";
  stopReason: StopReason;
  error?: string;
  startScore?: number;
  bestScore?: number;
  bestProgram: string;
  improved: boolean;
  bestEvaluationIndex?: number;
  evaluations: { used: number; valid: number; invalid: number; budget: number };
  usage: Usage & { model_calls: number; seconds: number };
  iterations: number;
}

export function taskMessage(task: DiscoveryTask, start: Evaluation | undefined, maxEvals: number, names?: OfferedNames): string {
  const lines = [`# Task\n\n${task.description}\n`];
  if (start?.valid) lines.push(`Starting score: ${start.score} (${task.metric}, ${task.direction})`);
  else if (start) lines.push(`The starting program is invalid: ${start.reason}`);
  if (!hasEvolveMarkers(task.seedProgram)) lines.push(`The program: ${WHOLE_PROGRAM_EDITABLE}.`);
  lines.push(`Budget: ${maxEvals} evaluator calls (${offeredName("evaluate_program", names)}).`);
  if (task.reference) lines.push(`Best known value: ${task.reference.value}.`);
  lines.push(`\nBegin by looking at the program with ${offeredName("view_program", names)}.`);
  return lines.join("\n");
}

function buildMiddlewares(o: RolloutOptions, env: DiscoveryEnvironment, generated: GeneratedCode | undefined): Middleware[] {
  const host: MiddlewareHost = { revertToBest: () => env.revertToBest(), bestScore: () => env.best?.score };
  return o.harness.middlewares.map((m) => {
    if (m.kind === "builtin") return builtinMiddlewares[m.name as keyof typeof builtinMiddlewares](m.params, host);
    if (!generated) throw new Error(`middleware ${m.name} is generated code and no sandbox was given`);
    return generated.middleware(m);
  });
}

/** The discovery environment with the generated tools added in front of it. */
function withGeneratedTools(env: DiscoveryEnvironment, generated: GeneratedCode | undefined): Environment {
  if (!generated || generated.tools.size === 0) return env;
  const tools = generated.tools;
  return {
    implements: (t) => tools.has(t) || env.implements(t),
    call: (t, a, signal) => tools.get(t)?.(a, signal) ?? env.call(t, a),
    exhausted: () => env.exhausted(),
  };
}

/** Writes each evaluated program under programs/ and its evaluation into the trajectory. */
export function evaluationWriter(o: Pick<RolloutOptions, "files" | "task" | "trajectory">): (r: EvaluationRecord) => void {
  return (r: EvaluationRecord) => {
    const file = o.files && `programs/${String(r.index).padStart(4, "0")}${o.task.programExtension}`;
    if (file) o.files?.write(file, r.program);
    const e = r.evaluation;
    o.trajectory.write({
      type: "evaluation",
      index: r.index,
      valid: e.valid,
      score: e.valid ? e.score : null,
      reason: e.reason,
      improved: r.improved,
      metrics: e.metrics,
      seconds: Math.round(e.seconds * 1000) / 1000,
      program_sha256: r.programSha,
      program_file: file,
      stderr: e.artifacts.stderr?.slice(-2000),
    });
  };
}

/** One rollout: the harness drives the model through a budgeted search on the task; the best valid program wins. */
export async function runRollout(o: RolloutOptions): Promise<RolloutOutcome> {
  // A harness program runs as a program: it edits the program file, hone evaluates what it left (program-rollout.ts).
  if (o.harness.program) return runProgramRollout(o, o.harness.program);
  const started = performance.now();
  const startProgram = o.startProgram ?? o.task.seedProgram;
  const onEvaluation = evaluationWriter(o);
  const env = new DiscoveryEnvironment({
    task: o.task,
    startProgram,
    startEvaluation: o.startEvaluation,
    maxEvals: o.maxEvals,
    evaluate: o.evaluate,
    onEvaluation,
  });
  const hasGenerated = o.harness.tools.some((t) => t.kind === "custom") || o.harness.middlewares.some((m) => m.kind === "custom");
  if (hasGenerated && !o.generatedCode)
    throw new Error(`the harness ${o.harness.name} carries generated code and no sandbox was given`);
  const generated = hasGenerated ? o.generatedCode?.(env, o.trajectory) : undefined;
  const timeLimitSec = o.timeLimitSec ?? o.harness.timeoutSec;
  o.trajectory.write({
    type: "rollout_start",
    harness: { name: o.harness.name, content_hash: o.harness.contentHash },
    task: { id: o.task.id, metric: o.task.metric, direction: o.task.direction },
    model: o.model.id,
    sampling: { ...o.harness.sampling, seed: o.harness.sampling.seed ?? o.seed },
    seed: o.seed,
    max_evals: o.maxEvals,
    time_limit_sec: timeLimitSec,
    start_score: o.startEvaluation?.valid ? o.startEvaluation.score : null,
  });
  const offered = modelOffered(o.model, o.harness.tools);
  const loop = await runAgentLoop({
    harness: o.harness,
    model: o.model,
    env: withGeneratedTools(env, generated),
    tools: o.harness.tools.map(toToolDefinition),
    taskMessage: taskMessage(o.task, o.startEvaluation, o.maxEvals, offered),
    sampling: { ...o.harness.sampling, seed: o.harness.sampling.seed ?? o.seed },
    middlewares: buildMiddlewares(o, env, generated),
    trajectory: o.trajectory,
    budget: () => ({ used: env.used, left: env.left, total: env.total }),
    deadline: started + timeLimitSec * 1000,
    offered,
  }).finally(() => generated?.dispose());
  const valid = env.records.filter((r) => r.evaluation.valid).length;
  const startScore = o.startEvaluation?.valid ? o.startEvaluation.score : undefined;
  const outcome: RolloutOutcome = {
    status: loop.stopReason === "model_error" ? "failed" : "completed",
    stopReason: loop.stopReason,
    error: loop.error,
    startScore,
    bestScore: env.best?.score,
    bestProgram: env.best?.program ?? startProgram,
    improved: env.best !== undefined && env.best.index > 0,
    bestEvaluationIndex: env.best && env.best.index > 0 ? env.best.index : undefined,
    evaluations: { used: env.used, valid, invalid: env.used - valid, budget: o.maxEvals },
    usage: { ...loop.usage, model_calls: loop.modelCalls, seconds: (performance.now() - started) / 1000 },
    iterations: loop.iterations,
  };
  return endRollout(o, outcome);
}

/** A rollout's last trajectory line and, where it writes files, its best program; shared by agents and harness programs. */
export function endRollout(o: Pick<RolloutOptions, "files" | "task" | "trajectory">, outcome: RolloutOutcome): RolloutOutcome {
  o.trajectory.write({
    type: "rollout_end",
    status: outcome.status,
    stop_reason: outcome.stopReason,
    error: outcome.error,
    best_score: outcome.bestScore ?? null,
    improved: outcome.improved,
    evaluations: outcome.evaluations,
    usage: outcome.usage,
  });
  o.files?.write(`best_program${o.task.programExtension}`, outcome.bestProgram);
  return outcome;
}

/** A rollout's result.json, into the folder (or memory) its files go to. */
export function writeResult(files: RolloutFiles, value: unknown): void {
  files.write("result.json", jsonText(value));
}
