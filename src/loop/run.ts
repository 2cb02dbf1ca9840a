import { createHash } from "node:crypto";
import { readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { HoneError, harnessError } from "../errors.ts";
import type { Harness } from "../harness/types.ts";
import { HONE_VERSION } from "../measure/identity.ts";
import { type CacheMode, forScope } from "../model/cache.ts";
import { preflight } from "../model/check.ts";
import { DEFAULT_API_KEY_ENV } from "../model/openai-compatible.ts";
import type { ModelSettings, ResolvedModel } from "../model/resolve.ts";
import { type RolloutOutcome, runRollout, writeResult } from "../runtime/rollout.ts";
import { prepareHarness } from "../sandbox/check.ts";
import { generatedCodeHost } from "../sandbox/generated-code.ts";
import { taskInputs } from "../sandbox/tool-host.ts";
import { withoutPassword } from "../secret-url.ts";
import { insertCandidate } from "../store/candidates.ts";
import { createRunDb, type Db, finishRun, openDb } from "../store/db.ts";
import { folderFiles } from "../store/rollout-files.ts";
import { JsonlTrajectory } from "../store/trajectory.ts";
import { recordedTaskRef, resolveTask } from "../task/builtin.ts";
import { taskContentHash } from "../task/content-hash.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { evaluateProgram } from "../task/evaluator.ts";
import { EvaluatorPool } from "../task/evaluator-pool.ts";
import type { EvaluatorRuntime } from "../task/evaluator-runtime.ts";
import { isolationNotice } from "../task/python-env.ts";
import { evaluateIn, type ScopedEvaluate } from "../task/recorded-evaluations.ts";
import { checkSlurmRun, type SlurmSettings } from "./distributed/slurm-script.ts";
import { Recording } from "./recording.ts";
import { remoteRunner } from "./remote-runner.ts";
import { recordRollout } from "./rollout-records.ts";
import { claimDestination, refuseFilled } from "./run-destination.ts";
import { defaultRunDir, snapshotHarness } from "./run-dir.ts";
import { remoteRollout } from "./run-remote.ts";
import type { Runner } from "./runner.ts";
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
  /** Request cache: off (default for a single run), read-write, or replay. */
  cache?: { mode: CacheMode; dir?: string };
  /** For `hone replay`: the recorded run whose model calls and evaluations this run reproduces. */
  replayOf?: string;
  /**
   * Called with the hidden folder the run is built in and what removes it (and lets the destination go), for a caller
   * that is stopped; it does nothing once the run was put in place.
   */
  onPartial?: (dir: string, abandon: () => void) => void;
  /** The rollout on BullMQ workers through this Redis URL (the seed program is still evaluated here). */
  queue?: string;
  /** The rollout as an sbatch job (a shared filesystem). */
  slurm?: SlurmSettings;
}

/** What a run stores to be replayed: its options without callbacks, the harness and task (a folder made absolute). */
export interface RunConfig extends Omit<RunHarnessOptions, "onNotice" | "onEvent" | "onPartial"> {
  harness: string;
  task: string;
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
  return defaultRunDir(`run-${taskId}`);
}

/**
 * The executor's endpoint and API key variable: the user's flags alone. A package (its agent.yaml's llm_config) may
 * name a model, an endpoint and a key variable, but a package is not trusted with where the user's key goes: hone
 * calls only an endpoint the user gives and reads the key only from the variable the user names (OPENAI_API_KEY by
 * default), and says so where the package named others.
 */
function endpointOf(opts: RunHarnessOptions, harness: Harness, model: string): { baseUrl?: string; apiKeyEnv?: string } {
  const named = harness.defaults;
  if (model !== "offline" && !opts.baseUrl)
    throw new HoneError(
      "usage",
      `--base-url is needed for model "${model}" (or use --model offline)${named.baseUrl ? `; the package's agent.yaml names ${named.baseUrl}, which hone calls only when you give it as --base-url (a package does not choose where your API key goes)` : ""}`,
    );
  if (opts.baseUrl && named.apiKeyEnv && named.apiKeyEnv !== (opts.apiKeyEnv ?? DEFAULT_API_KEY_ENV))
    opts.onNotice?.(
      `the package's agent.yaml reads its key from $${named.apiKeyEnv}; hone reads $${opts.apiKeyEnv ?? DEFAULT_API_KEY_ENV} (--api-key-env ${named.apiKeyEnv} to use the package's)`,
    );
  return { baseUrl: opts.baseUrl, apiKeyEnv: opts.apiKeyEnv };
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
  checkRunNumbers(opts);
  const task = typeof taskRef === "string" ? await resolveTask(taskRef, opts.tasksDir) : taskRef;
  const harness: Harness = await prepareHarness(harnessDir, { task });
  refuseWithoutDiscoveryTools(harness, resolve(harnessDir));
  const learned = learnedHarnessNote(resolve(harnessDir), task.programExtension);
  if (learned) opts.onNotice?.(learned);
  if (opts.outDir !== undefined) refuseFilled(resolve(opts.outDir));
  if (opts.slurm) checkSlurmRun(opts.slurm, resolve(opts.outDir ?? defaultOutDir(task.id)));
  const model = opts.model ?? harness.defaults.model ?? "offline";
  const { baseUrl, apiKeyEnv } = endpointOf(opts, harness, model);
  const maxEvals = opts.maxEvals ?? task.budget.maxEvals;

  if (baseUrl && opts.cache?.mode !== "replay") {
    const problem = await preflight({ baseUrl, model, dialect: opts.dialect, apiKeyEnv });
    if (problem) throw new HoneError("endpoint", `${problem.message} (nothing was written)`);
  }

  const notice = isolationNotice();
  if (notice) opts.onNotice?.(notice);
  // Built under a hidden name (hone.db and all), held by this process, and renamed when finished.
  // The default folder is made under runs/ of the current folder.
  const outParent = opts.outDir ?? "runs";
  if (insideFolder(harness.dir, outParent))
    throw new HoneError(
      "usage",
      `${resolve(outParent)} is inside the harness package ${harness.dir}: the run would become part of the package (in its copy under harness/, and in every later run's content hash); choose an --out outside it`,
    );
  const destination = claimDestination(opts.outDir, task.id, opts.onNotice);
  const { outDir, partial } = destination;
  opts.onPartial?.(partial, () => destination.abandon());
  const { onNotice: _n, onEvent: _e, onPartial: _p, ...stored } = opts;
  const config: RunConfig = {
    ...stored,
    ...absolutePaths(stored),
    harness: resolve(harnessDir),
    task: typeof taskRef === "string" ? recordedTaskRef(taskRef) : task.dir,
    model,
    baseUrl,
    maxEvals,
  };
  let begun: { recording: Recording; db: Db };
  try {
    begun = beginFolder(partial, harness.dir, config);
  } catch (err) {
    destination.abandon();
    throw err;
  }
  const { recording, db } = begun;
  let pool: EvaluatorPool | undefined;
  const live = (program: string) => (pool ? pool.evaluate(program) : evaluateProgram(task, program));
  const taskHash = taskContentHash(task);
  const evaluate = recording.evaluator(live, taskHash);
  const runtime = recording.evaluatorRuntime(task, taskHash);
  let resolved: ResolvedModel | undefined;
  let jsonl: JsonlTrajectory | undefined;
  let remote: Runner | undefined;
  try {
    remote =
      opts.cache?.mode === "replay"
        ? undefined
        : await remoteRunner({
            queue: opts.queue,
            slurm: opts.slurm,
            runKey: `run-${createHash("sha256").update(outDir).digest("hex").slice(0, 16)}`,
            runDir: partial,
            slurmNamedBy: outDir,
            task,
            taskRef: typeof taskRef === "string" ? recordedTaskRef(taskRef) : undefined,
            tasksDir: opts.tasksDir,
            executor: { ...opts, model, baseUrl, apiKeyEnv },
            timeLimitSec: opts.timeLimitSec,
            recording,
          });
    if (opts.warmPool !== false && !remote) pool = await EvaluatorPool.start(task, { size: 1, onNotice: opts.onNotice });
    const start = await evaluateIn(evaluate, "start")(task.seedProgram);
    assertEvaluatorWorks(task, start);
    const seed = opts.seed ?? 0;
    let outcome: RolloutOutcome;
    if (remote) {
      const job = { seed, maxEvals, harnessDir: harness.dir, startProgram: task.seedProgram, startEvaluation: start };
      outcome = await remoteRollout(remote, job, { partial, task, recording });
    } else {
      resolved = await recording.model({ ...opts, model, baseUrl, apiKeyEnv });
      jsonl = new JsonlTrajectory(join(partial, "trajectory.jsonl"));
      outcome = await localRollout({
        harness,
        task,
        model: resolved,
        jsonl,
        opts,
        pool,
        evaluate,
        maxEvals,
        seed,
        start,
        partial,
      });
      jsonl.close();
    }
    writeResult(folderFiles(partial), {
      status: outcome.status,
      stop_reason: outcome.stopReason,
      error: outcome.error,
      task: { id: task.id, dir: task.dir, metric: task.metric, direction: task.direction, reference: task.reference ?? null },
      harness: { name: harness.name, dir: harness.dir, content_hash: harness.contentHash },
      model: {
        name: resolved?.modelName ?? model,
        base_url: model === "offline" ? "offline (in-process)" : withoutPassword(resolved?.baseUrl ?? baseUrl ?? ""),
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
    recordRun(db, partial, {
      task,
      taskHash,
      runtime: await runtime,
      harness,
      model,
      baseUrl,
      dialect: opts.dialect,
      maxEvals,
      seed,
    });
    finishRun(db, { best_score: outcome.bestScore ?? null, start_score: outcome.startScore ?? null, status: outcome.status });
    db.close();
    recording.close();
    destination.finish();
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
    if (db.open) db.close();
    recording.close();
    destination.abandon();
    throw err;
  } finally {
    pool?.close();
    await resolved?.close();
    await remote?.close();
  }
}

/**
 * A package run on a discovery task offers the tools the search is made of: without `edit_program` and
 * `evaluate_program` (a QA harness's calculator and final_answer) the model can neither change nor score the program,
 * and the run spent its model calls for nothing and exited 0. A harness program (harness.json) drives the task itself.
 */
function refuseWithoutDiscoveryTools(harness: Harness, dir: string): void {
  if (harness.program) return;
  const names = new Set(harness.tools.map((t) => t.name));
  const missing = ["edit_program", "evaluate_program"].filter((n) => !names.has(n));
  if (missing.length > 0)
    throw harnessError(
      join(dir, "agent.yaml"),
      "tools",
      `has no ${missing.join(" and no ")}: on a discovery task the model changes and scores the program through them; add them (tools/<name>.tool.yaml, as in harnesses/initial), or run this harness where its tools fit (hone eval for a QA harness)`,
    );
}

/** Whether `path` is `dir` or lies under it, both by their real paths (a folder not made yet by its parent's). */
function insideFolder(dir: string, path: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return join(real(dirname(p)), basename(p));
    }
  };
  const d = real(dir);
  const p = real(resolve(path));
  return p === d || p.startsWith(d + sep);
}

/** The most evaluator calls a rollout may be given (as `hone optimize --max-evals`). */
const MAX_EVALS = 10_000;

/**
 * The numbers a run is given, refused before anything starts (exit 2) naming the flag and the option: a budget that is
 * no whole number (`--max-evals abc` ran unbounded, `--time-limit abc` stopped at once, `--seed abc` failed only when
 * the finished run was recorded).
 */
function checkRunNumbers(opts: Pick<RunHarnessOptions, "maxEvals" | "timeLimitSec" | "seed">): void {
  const refuse = (flag: string, option: string, value: unknown, says: string) => {
    throw new HoneError("usage", `${flag} ${String(value).slice(0, 40)} (${option}): ${says}`);
  };
  const { maxEvals, timeLimitSec, seed } = opts as Record<string, unknown>;
  if (maxEvals !== undefined && !(Number.isInteger(maxEvals) && (maxEvals as number) >= 1 && (maxEvals as number) <= MAX_EVALS))
    refuse("--max-evals", "maxEvals", maxEvals, `a whole number from 1 to ${MAX_EVALS}`);
  if (timeLimitSec !== undefined && !(typeof timeLimitSec === "number" && Number.isFinite(timeLimitSec) && timeLimitSec > 0))
    refuse("--time-limit", "timeLimitSec", timeLimitSec, "a number of seconds above 0");
  if (seed !== undefined && !(Number.isSafeInteger(seed) && (seed as number) >= 0))
    refuse("--seed", "seed", seed, "a whole number from 0");
}

/**
 * A note for a package that is an optimize run's `best/` (its meta.json names the score it reached): that score was
 * the best program found over the run's rounds, each rollout starting from the incumbent program, while this run
 * starts from the task's seed program, as every run does; so a lower score here is no failure to reproduce.
 */
function learnedHarnessNote(dir: string, programExtension: string): string | undefined {
  const file = join(dir, "meta.json");
  let meta: unknown;
  try {
    if (!statSync(file).isFile() || statSync(file).size > 64 * 1024) return undefined;
    meta = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  const m = meta as { score?: unknown; candidate?: unknown; round?: unknown };
  if (typeof m !== "object" || m === null || typeof m.score !== "number" || typeof m.candidate !== "string") return undefined;
  return (
    `${dir} is a learned harness (meta.json: score ${m.score} by candidate ${m.candidate.slice(0, 40)}${typeof m.round === "number" ? ` in round ${m.round}` : ""}); ` +
    "that score is the best program its optimize run reached over its rounds, each rollout starting from the incumbent " +
    `program (the run folder's best_program${programExtension} is that program). This run starts from the task's seed program, as every hone run does: ` +
    "its score measures the harness in one rollout, and is expected to be lower"
  );
}

/** The options that name folders, made absolute as the run records them (it may be replayed from another folder). */
function absolutePaths(o: Pick<RunHarnessOptions, "tasksDir" | "cache">): Pick<RunHarnessOptions, "tasksDir" | "cache"> {
  return {
    tasksDir: o.tasksDir === undefined ? undefined : resolve(o.tasksDir),
    cache: o.cache?.dir === undefined ? o.cache : { ...o.cache, dir: resolve(o.cache.dir) },
  };
}

/** The run's folder begun: the harness copied in, its hone.db made and opened, its records' writer. */
function beginFolder(partial: string, harnessDir: string, config: RunConfig): { recording: Recording; db: Db } {
  snapshotHarness(harnessDir, join(partial, "harness"));
  createRunDb(join(partial, "hone.db"), "run", config);
  const recording = new Recording(partial, { cache: config.cache ?? { mode: "off" }, replayOf: config.replayOf });
  try {
    return { recording, db: openDb(join(partial, "hone.db"), { replay: config.replayOf !== undefined }) };
  } catch (err) {
    recording.close();
    throw err;
  }
}

/** The rollout in this process: the harness's agent loop on the task, its trajectory into the run's folder. */
function localRollout(o: {
  harness: Harness;
  task: DiscoveryTask;
  model: ResolvedModel;
  jsonl: JsonlTrajectory;
  opts: RunHarnessOptions;
  pool: EvaluatorPool | undefined;
  evaluate: ScopedEvaluate;
  maxEvals: number;
  seed: number;
  start: Evaluation;
  partial: string;
}): Promise<RolloutOutcome> {
  const { harness, task, seed, pool } = o;
  return runRollout({
    harness,
    task,
    model: forScope(o.model.model, "rollout"),
    evaluate: evaluateIn(o.evaluate, "rollout"),
    maxEvals: o.maxEvals,
    seed,
    trajectory: {
      write: (e: Record<string, unknown> & { type: string }) => {
        o.jsonl.write(e);
        o.opts.onEvent?.(e);
      },
    },
    files: folderFiles(o.partial),
    startEvaluation: o.start,
    timeLimitSec: o.opts.timeLimitSec,
    generatedCode: (env, t) =>
      generatedCodeHost(harness.tools, env, taskInputs(task), t, { seed, python: { task, channel: pool?.toolChannel() } }),
  });
}

/** The run's records: its harness as the one candidate, its rollout with evaluations and model calls. */
function recordRun(
  db: Db,
  dir: string,
  o: {
    task: DiscoveryTask;
    taskHash: string;
    runtime?: EvaluatorRuntime;
    harness: Harness;
    model: string;
    baseUrl?: string;
    dialect?: string;
    maxEvals: number;
    seed: number;
  },
): void {
  insertCandidate(db, "run", {
    id: "harness",
    round: 0,
    slot: 0,
    parentCommit: "",
    commit: null,
    ref: null,
    contentHash: o.harness.contentHash,
    spec: null,
    changed: [],
    status: "seed",
    gateError: null,
    repaired: false,
  });
  recordRollout(
    db,
    dir,
    { runId: "run", round: 0, candidateId: "harness", kind: "baseline", id: "rollout", dir, seed: o.seed },
    {
      task: { id: o.task.id, content: o.taskHash, metric: o.task.metric, direction: o.task.direction, evaluator: o.runtime },
      executor: {
        endpoint: o.model === "offline" ? "offline" : withoutPassword(o.baseUrl ?? ""),
        model: o.model,
        dialect: o.dialect ?? "vllm",
      },
      budget: { maxEvals: o.maxEvals, timeoutSec: o.task.timeoutSec },
      hone: HONE_VERSION,
    },
  );
}
