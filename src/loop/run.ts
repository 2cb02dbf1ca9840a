import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import type { Harness } from "../harness/types.ts";
import { preflight } from "../model/check.ts";
import { type ModelSettings, resolveModel } from "../model/resolve.ts";
import { type RolloutOutcome, runRollout, writeResult } from "../runtime/rollout.ts";
import { prepareHarness } from "../sandbox/check.ts";
import { generatedCodeHost } from "../sandbox/generated-code.ts";
import { taskInputs } from "../sandbox/tool-host.ts";
import { JsonlTrajectory } from "../store/trajectory.ts";
import { resolveTask } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { evaluateProgram } from "../task/evaluator.ts";
import { EvaluatorPool } from "../task/evaluator-pool.ts";
import { isolationNotice } from "../task/python-env.ts";
import { assertEvaluatorWorks } from "./seed-check.ts";

export const DEFAULT_HARNESS = resolve(dirname(new URL(import.meta.url).pathname), "..", "..", "harnesses", "initial");

export interface RunHarnessOptions extends Partial<ModelSettings> {
  /** A folder of task folders (with an optional tasks.yaml) to look task ids up in; default HONE_TASKS. */
  tasksDir?: string;
  /** Evaluate in a warm evaluator pool (default) or spawn a fresh interpreter per evaluation. */
  warmPool?: boolean;
  maxEvals?: number;
  outDir?: string;
  seed?: number;
  timeLimitSec?: number;
  /** Called once with a plain note when evaluated programs cannot be fully isolated here. */
  onNotice?: (text: string) => void;
  /** Called with each trajectory event, for live progress. */
  onEvent?: (event: Record<string, unknown>) => void;
  /** Called with the hidden folder the run is built in, so a caller that is stopped can remove it. */
  onPartial?: (dir: string) => void;
}

export interface RunHarnessResult {
  status: RolloutOutcome["status"];
  bestScore?: number;
  startScore?: number;
  valid: boolean;
  improved: boolean;
  bestProgram: string;
  usage: RolloutOutcome["usage"];
  evaluations: RolloutOutcome["evaluations"];
  outDir: string;
  outcome: RolloutOutcome;
}

function defaultOutDir(taskId: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-").replace("T", "_").slice(0, 19);
  return join("runs", `run-${taskId}-${stamp}`);
}

/**
 * `hone run` as a function: one harness on one task, on one model. Validates everything before writing anything;
 * the run directory appears (by rename) only once the rollout has finished, so nothing half-written is left.
 */
export async function runHarness(
  harnessDir: string,
  taskRef: string | DiscoveryTask,
  opts: RunHarnessOptions = {},
): Promise<RunHarnessResult> {
  const task = typeof taskRef === "string" ? await resolveTask(taskRef, opts.tasksDir) : taskRef;
  const harness: Harness = await prepareHarness(harnessDir, { task });
  const outDir = resolve(opts.outDir ?? defaultOutDir(task.id));
  if (existsSync(outDir) && readdirSync(outDir).length > 0) {
    throw new HoneError("usage", `${outDir} already exists and is not empty; choose another --out`);
  }
  const model = opts.model ?? harness.defaults.model ?? "offline";
  const baseUrl = opts.baseUrl ?? (model === "offline" ? undefined : harness.defaults.baseUrl);
  if (model !== "offline" && !baseUrl)
    throw new HoneError("usage", `--base-url is needed for model "${model}" (or use --model offline)`);
  const maxEvals = opts.maxEvals ?? task.budget.maxEvals;

  if (baseUrl) {
    const problem = await preflight({
      baseUrl,
      model,
      dialect: opts.dialect,
      apiKeyEnv: opts.apiKeyEnv ?? harness.defaults.apiKeyEnv,
    });
    if (problem) throw new HoneError("endpoint", `${problem.message} (nothing was written)`);
  }

  const notice = isolationNotice();
  if (notice) opts.onNotice?.(notice);
  const pool = opts.warmPool === false ? undefined : await EvaluatorPool.start(task, { size: 1 });
  const evaluate = (program: string) => (pool ? pool.evaluate(program) : evaluateProgram(task, program));
  const closePool = () => pool?.close();
  let start: Awaited<ReturnType<typeof evaluate>>;
  try {
    start = await evaluate(task.seedProgram);
  } catch (err) {
    closePool();
    throw err;
  }
  try {
    assertEvaluatorWorks(task, start);
  } catch (err) {
    closePool();
    throw err;
  }

  const resolved = await resolveModel({ ...opts, model, baseUrl, apiKeyEnv: opts.apiKeyEnv ?? harness.defaults.apiKeyEnv });
  const partial = join(dirname(outDir), `.${basename(outDir)}.partial-${process.pid}`);
  mkdirSync(partial, { recursive: true });
  opts.onPartial?.(partial);
  let jsonl: JsonlTrajectory | undefined;
  try {
    jsonl = new JsonlTrajectory(join(partial, "trajectory.jsonl"));
    const trajectory = {
      write: (e: Record<string, unknown> & { type: string }) => {
        jsonl?.write(e);
        opts.onEvent?.(e);
      },
    };
    const seed = opts.seed ?? 0;
    const outcome = await runRollout({
      harness,
      task,
      model: resolved.model,
      evaluate,
      maxEvals,
      seed,
      trajectory,
      outDir: partial,
      startEvaluation: start,
      timeLimitSec: opts.timeLimitSec,
      generatedCode: (env, t) => generatedCodeHost(harness.tools, env, taskInputs(task), t, { seed }),
    });
    jsonl.close();
    writeResult(partial, {
      status: outcome.status,
      stop_reason: outcome.stopReason,
      error: outcome.error,
      task: { id: task.id, dir: task.dir, metric: task.metric, direction: task.direction, reference: task.reference ?? null },
      harness: { name: harness.name, dir: harness.dir, content_hash: harness.contentHash },
      model: {
        name: resolved.modelName,
        base_url: resolved.offline ? "offline (in-process)" : resolved.baseUrl,
        dialect: opts.dialect ?? "vllm",
      },
      seed,
      start_score: outcome.startScore ?? null,
      start_valid: start.valid,
      best_score: outcome.bestScore ?? null,
      best_valid: outcome.bestScore !== undefined,
      improved: outcome.improved,
      best_evaluation_index: outcome.bestEvaluationIndex ?? null,
      best_program_file: `best_program${task.programExtension}`,
      evaluations: outcome.evaluations,
      usage: outcome.usage,
      iterations: outcome.iterations,
    });
    mkdirSync(dirname(outDir), { recursive: true });
    if (existsSync(outDir)) rmSync(outDir, { recursive: true });
    renameSync(partial, outDir);
    return {
      status: outcome.status,
      bestScore: outcome.bestScore,
      startScore: outcome.startScore,
      valid: outcome.bestScore !== undefined,
      improved: outcome.improved,
      bestProgram: outcome.bestProgram,
      usage: outcome.usage,
      evaluations: outcome.evaluations,
      outDir,
      outcome,
    };
  } catch (err) {
    jsonl?.close();
    rmSync(partial, { recursive: true, force: true });
    throw err;
  } finally {
    closePool();
    await resolved.close();
  }
}
