import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stringify as toYaml } from "yaml";
import { HoneError } from "../errors.ts";
import { isHarnessFolder } from "../harness/program.ts";
import { loadMethod, methodParams } from "../method/catalog.ts";
import { type LoraSettings, resumeAdapter } from "../method/lora.ts";
import type { CacheMode } from "../model/cache.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { checkHarness } from "../sandbox/check.ts";
import { keyedUrlResumeProblem, passwordRedacted, withoutPassword } from "../secret-url.ts";
import { candidateOfCommit, lastClosedRound, lastFinishedRound, slotSummaries } from "../store/candidates.ts";
import { anyRound, type Db, finishRun, openDb, roundRows, runRow } from "../store/db.ts";
import { recordedHoneVersion } from "../store/receipts.ts";
import { resolveTask } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { checkTaskNeedsAsync } from "../task/needs.ts";
import { primePython } from "../task/python-env.ts";
import { checkSlurmRun, type SlurmSettings } from "./distributed/slurm-script.ts";
import { refuseOtherVersion } from "./hone-version.ts";
import {
  configOfInput,
  inputName,
  type OptimizeInput,
  parseOptimizeConfig,
  recordedSettings,
  settingsFromConfig,
} from "./optimize-config.ts";
import { closeEarly, type Incumbent, open, type RunContext, startEarly } from "./optimize-context.ts";
import type { RunNoise } from "./optimize-noise.ts";
import { gateMode, type TttParams } from "./optimize-proposals.ts";
import { keptSeedDir, roundZero, runRound } from "./optimize-rounds.ts";
import { type HeldRunDir, takeRunDir } from "./run-writer.ts";
import type { Runner } from "./runner.ts";

export { DEFAULT_PROPOSER_HARNESS, DEFAULT_QA_HARNESS, type OptimizeInput } from "./optimize-config.ts";

/** A QA benchmark as the search's target: candidates are measured on `train` tasks, the final choice on `validation`. */
export interface BenchmarkSettings {
  id: string;
  train: number;
  validation: number;
  dataDir?: string;
  /** Divides the benchmark's train file into train and validation (as experiment files' split_seed). */
  splitSeed: number;
}

export interface OptimizeSettings {
  /** A discovery task (a built-in id or a folder); exactly one of `task` and `benchmark`. */
  task?: string;
  benchmark?: BenchmarkSettings;
  tasksDir?: string;
  seedHarness: string;
  proposerHarness: string;
  executor: Partial<ModelSettings> & { model: string };
  proposer: Partial<ModelSettings> & { model: string };
  rounds: number;
  /** The method that proposes and keeps candidates (hone methods lists them); default harnessttt. */
  method?: string;
  /** The method's parameters, validated by its own schema (defaults for what is not given). */
  methodParams?: Record<string, unknown>;
  proposals: number;
  maxEvals: number;
  concurrency: number;
  paired: boolean;
  seed: number;
  warmPool: boolean;
  timeLimitSec?: number;
  learning: { mode: "context" | "lora"; digestTokens: number; lora?: LoraSettings };
  /** Request cache: off, read-write (default) or replay; `dir` holds the shared cache (default ~/.cache/hone). */
  cache?: { mode: CacheMode; dir?: string };
  /** For `hone replay`: the recorded run whose model calls and evaluations this run reproduces. */
  replayOf?: string;
  /** Run rollouts on BullMQ workers through this Redis URL (`hone worker` on each machine) instead of locally. */
  queue?: string;
  /** Run each rollout as a Slurm job (sbatch) on a filesystem shared with the run directory. */
  slurm?: SlurmSettings;
  /**
   * How many times round 0 evaluates the seed program to measure the evaluator's noise, and how many times each
   * comparison re-evaluates a candidate's best program and the incumbent where it is stochastic (default 3; 1
   * disables noise measurement: single scores, strictly better).
   */
  noiseRepeats?: number;
}

export type OptimizeEvent =
  | {
      type: "start";
      runDir: string;
      resumed: boolean;
      task: string;
      rounds: number;
      paired: boolean;
      maxEvals: number;
      /** Seconds from optimize() being called to this event: the set-up before round 0 (checks, records, pool). */
      setupSeconds?: number;
    }
  | { type: "round_start"; round: number; incumbentScore: number | null }
  | { type: "proposals"; round: number; valid: number; repaired: number; invalid: number }
  | { type: "rollout_event"; round: number; job: string; event: Record<string, unknown> }
  | { type: "rollout_done"; round: number; job: string; score: number | null; error?: string }
  | {
      type: "round_end";
      round: number;
      incumbentScore: number | null;
      bestScore: number | null;
      moved: boolean;
      /** Per slot; null where the candidate was unmeasurable (a failed or mismatched paired control). */
      rewards: (number | null)[];
    }
  | { type: "noise"; noise: RunNoise }
  | { type: "notice"; text: string };

export interface RoundSummary {
  round: number;
  incumbentScore: number | null;
  bestScore: number | null;
  moved: boolean;
  candidates: {
    slot: number;
    status: string;
    score: number | null;
    reward: number | null;
    advantage: number | null;
    changed: string[];
  }[];
}

export interface OptimizeResult {
  runDir: string;
  runId: string;
  bestHarnessPath: string;
  bestScore: number | null;
  startScore: number | null;
  /** The evaluator's noise as measured in round 0 (or declared by the task). */
  noise: RunNoise | undefined;
  rounds: RoundSummary[];
  /** A QA benchmark run: the final choice's mean score on the validation slice (null where every task failed). */
  validationScore?: number | null;
  /** Writes the best program. */
  writeBestProgram(path: string): void;
}

export type RunnerFactory = (o: { task: DiscoveryTask; settings: OptimizeSettings; runDir: string }) => Runner | undefined;

export interface OptimizeOptions {
  /** The run directory (default runs/opt-<task or benchmark>-<time>); with `resume`, the run to continue. */
  outDir?: string;
  resume?: boolean;
  /** What a resumed run may change: how long it goes on, how much at once, and where its rollouts run. */
  overrides?: { rounds?: number; concurrency?: number; queue?: string; slurm?: SlurmSettings };
  /** The endpoints' URLs given again on resume, each used where the stored one is it with its credentials taken out. */
  endpoints?: { executor?: string; proposer?: string };
  onEvent?: (e: OptimizeEvent) => void;
  /**
   * Told the run's folder as soon as this process holds it, before anything is checked, with what gives it up (a new
   * run's folder removed): the CLI's Ctrl-C during the set-up leaves nothing behind.
   */
  onHeld?: (dir: string, abandon: () => void) => void;
  runner?: RunnerFactory;
  /**
   * Asked before each round of proposals (up to `rounds`), once every earlier round is recorded: whether to run it.
   * `hone compare` stops a cell here when its budget is spent.
   */
  nextRound?: (round: number) => boolean;
}

/**
 * Settings from what a caller gave, validated by the one schema (optimize-config.ts) with its defaults: a task or a
 * benchmark and models are enough. A discovery task's own budget is the default `maxEvals`.
 */
export async function resolveSettings(input: OptimizeInput): Promise<OptimizeSettings> {
  const config = parseOptimizeConfig(configOfInput(input), inputName);
  // Only the task's budget is read here; optimize() checks what the task needs (unless it replays).
  const task = config.task ? await resolveTask(config.task, config.tasks_dir, { check: false }) : undefined;
  const settings = settingsFromConfig(config, task?.budget.maxEvals ?? 10);
  return input.replayOf ? { ...settings, replayOf: input.replayOf } : settings;
}

/** The settings a run was started with, from its hone.db, with what may change on resume. */
export function storedSettings(runDir: string, o: OptimizeOptions): OptimizeSettings {
  if (!existsSync(join(runDir, "hone.db")))
    throw new HoneError("usage", `${runDir} has no hone.db to resume; start a run with --out ${runDir}`);
  // Read only: a run still being written is refused by its lock afterwards, before this process writes anything.
  const db = openDb(join(runDir, "hone.db"), { readonly: true });
  const row = runRow(db);
  const recorded = recordedHoneVersion(db);
  const done = row ? lastClosedRound(db) : 0;
  db.close();
  if (!row) throw new HoneError("usage", `${runDir}: the run was never started; remove the folder and start again`);
  if (row.kind !== "optimize")
    throw new HoneError("usage", `${runDir} is a ${row.kind} run, not an optimize run; resume it with hone ${row.kind}`);
  refuseOtherVersion(runDir, "resume", recorded);
  const stored = recordedSettings(JSON.parse(row.config));
  const changed = Object.fromEntries(Object.entries(o.overrides ?? {}).filter(([, v]) => v !== undefined));
  // What may change is checked by the same schema as everything else.
  parseOptimizeConfig(configOfInput({ ...stored, ...changed }), (f) => `--resume: ${f}`);
  const settings: OptimizeSettings = { ...stored, ...changed };
  // A run extended by an earlier `--resume --rounds` keeps the rounds it was started with in its settings: without
  // --rounds it goes on to the rounds it has closed; a --rounds given may not undo them.
  if (changed.rounds === undefined) settings.rounds = Math.max(settings.rounds, done);
  else refuseFewerRounds(runDir, settings.rounds, done);
  if (passwordRedacted(settings.queue))
    throw new HoneError(
      "usage",
      `${runDir} was started with --queue ${settings.queue}; hone never stores a password: resume it with --queue <the URL with its password>`,
    );
  for (const role of ["executor", "proposer"] as const) {
    // The endpoint given again (`hone compare` resuming a cell) stands in for the stored one it was redacted to.
    const again = o.endpoints?.[role];
    if (again !== undefined && withoutPassword(again) === settings[role].baseUrl)
      settings[role] = { ...settings[role], baseUrl: again };
    const problem = keyedUrlResumeProblem(runDir, role, settings[role].baseUrl, `--${role}-api-key-env`);
    if (problem) throw new HoneError("usage", problem);
  }
  return settings;
}

/**
 * A resumed run goes on from the rounds it has closed; it cannot undo them. Resumed with fewer rounds, it would end
 * on an earlier round's incumbent: best/, the best program and the summary moved back below a promotion its own
 * records keep.
 */
function refuseFewerRounds(runDir: string, rounds: number, done: number): void {
  if (rounds < done)
    throw new HoneError(
      "usage",
      `--rounds ${rounds}: ${runDir} has already closed round ${done}, and a resumed run goes on from there (it does not undo rounds); give --rounds ${done} or more, or read the run as it is (hone log ${runDir})`,
    );
}

/**
 * `hone optimize`: learn the harness at test time. Round 0 measures the seed harness; each later round the method
 * (harnessttt by default: K independent proposer samples) proposes candidates, each is compiled, gated and measured
 * — rolled out from the incumbent program under the same budget; rewards and advantages are recorded; the incumbent
 * moves only to a candidate that clears it beyond the measured noise (optimize-ratchet.ts). Every candidate is a
 * commit; every measurement and decision is a row in hone.db. A QA benchmark as the target is searched on its train
 * slice and the choice measured on validation (optimize-qa.ts). From TypeScript a task and models are enough: `optimize({ task: "circle-packing", executor: { model: "offline" }, proposer: { model: "offline" } })`.
 */
export async function optimize(input: OptimizeInput, o: OptimizeOptions = {}): Promise<OptimizeResult> {
  const calledAt = performance.now();
  if (o.resume && !o.outDir) throw new HoneError("usage", "resume needs the run directory (outDir)");
  const emit = o.onEvent ?? (() => {});
  const settings = o.resume ? storedSettings(resolve(o.outDir as string), o) : await resolveSettings(input);
  const task = settings.task ? await resolveTask(settings.task, settings.tasksDir, { check: false }) : undefined;
  const name = task?.id ?? settings.benchmark?.id ?? "task";
  // Taken before anything else is checked: a run started beside it (a sweep without --out) takes a folder of its own.
  const held = takeRunDir({
    dir: o.outDir,
    prefix: `opt-${name.replace(/[^A-Za-z0-9._-]+/g, "-")}`,
    resume: Boolean(o.resume),
    onNotice: (text) => emit({ type: "notice", text }),
  });
  try {
    o.onHeld?.(held.dir, held.abandon);
  } catch (err) {
    held.abandon();
    throw err;
  }
  if (!task) return optimizeBenchmark(settings, held, o);
  let ctx: RunContext;
  try {
    ctx = await startDiscovery(settings, task, held.dir, o, calledAt);
  } catch (err) {
    held.abandon(); // a new run's folder goes; another process's run was never taken
    throw err;
  }
  let failedAtStart = false;
  try {
    let incumbent = await roundZero(ctx);
    const lora = settings.learning.mode === "lora" ? settings.learning.lora : undefined;
    if (o.resume && lora) {
      const adapter = await resumeAdapter(ctx.db, ctx.runId, held.dir, lora, lastFinishedRound(ctx.db), settings.proposer);
      if (adapter) ctx.proposer = await ctx.recording.model({ ...settings.proposer, model: adapter });
    }
    for (let round = 1; round <= settings.rounds && (o.nextRound?.(round) ?? true); round++)
      incumbent = await runRound(ctx, round, incumbent);
    return finish(ctx, incumbent);
  } catch (err) {
    // A run that failed before round 0 began (a broken evaluator, a model that cannot be reached) has nothing
    // worth resuming: it leaves no folder behind, so the same command can simply be run again.
    failedAtStart = !o.resume && !anyRound(ctx.db);
    throw err;
  } finally {
    try {
      await ctx.close();
    } finally {
      if (failedAtStart) held.abandon();
      else held.lock.release();
    }
  }
}

/**
 * A discovery run's checks and set-up in its folder (held): the method's parameters, the seed package and the task
 * are checked before anything is written, while the warm pool starts.
 */
async function startDiscovery(
  settings: OptimizeSettings,
  task: DiscoveryTask,
  runDir: string,
  o: OptimizeOptions,
  calledAt: number,
): Promise<RunContext> {
  const emit = o.onEvent ?? (() => {});
  if (settings.slurm) checkSlurmRun(settings.slurm, runDir);
  // A replay runs no Python (its evaluations come from the records), so it does not probe the interpreter for what
  // the task needs.
  const method = await loadMethod(settings.method ?? "harnessttt");
  const params = methodParams(method, settings.methodParams ?? {});
  if (method.name === "harnessttt") gateMode(params as TttParams, settings.proposals);
  const replaying = settings.cache?.mode === "replay";
  // The interpreter's probe comes from the disk cache when it holds one, confirmed by a fresh probe beside the set-up
  // (open() awaits it before round 0). The warm pool starts first: its processes load the evaluator while this one
  // checks; a refusal closes it, and a probe that disagrees with the cache is the reason given.
  const python = replaying ? undefined : primePython(task.python);
  const early = { ...startEarly(settings, task), calledAt };
  // What the task needs is scanned by a Python process while this one checks the seed package.
  const needs = replaying ? undefined : checkTaskNeedsAsync(task);
  needs?.catch(() => {}); // met below
  try {
    await checkSeed(settings, runDir, Boolean(o.resume), task);
    await needs;
    // A queue whose Redis refuses hone (a wrong password, a database it lacks) is refused before a round is recorded,
    // so the refused run leaves no folder, as `hone run` does; one not answering yet is waited for later.
    if (settings.queue && !replaying)
      await (await import("./distributed/queue-connection.ts")).refuseRefusingQueue(settings.queue);
  } catch (err) {
    await closeEarly(early);
    await python;
    throw err;
  }
  try {
    return await open(settings, runDir, Boolean(o.resume), emit, o.runner, early);
  } catch (err) {
    await closeEarly(early);
    throw err;
  }
}

/**
 * Refuses a seed harness that cannot run (exit code `badHarness`). A resumed run goes on from the seed it kept
 * (candidates/r00-seed), so that copy is what it checks, when it passes: the folder the run was started from may have
 * changed or gone since. A copy that does not pass (cut short by a kill before it was committed) is made again from
 * that folder, which is then what is checked.
 */
async function checkSeed(settings: OptimizeSettings, runDir: string, resume: boolean, task?: DiscoveryTask): Promise<void> {
  const kept = keptSeedDir(runDir);
  if (resume && isHarnessFolder(kept) && (await checkHarness(kept, { task })).ok) return;
  const report = await checkHarness(settings.seedHarness, { task });
  if (!report.ok)
    throw new HoneError(
      "badHarness",
      `${settings.seedHarness}: the seed harness is refused:\n  ${report.problems.map((p) => p.message).join("\n  ")}`,
    );
}

/** A QA benchmark as the target (optimize-qa.ts), new or resumed; a failed start leaves no folder behind. */
async function optimizeBenchmark(settings: OptimizeSettings, held: HeldRunDir, o: OptimizeOptions): Promise<OptimizeResult> {
  const runDir = held.dir;
  let started = true;
  try {
    if (settings.slurm)
      throw new HoneError(
        "usage",
        "--runner slurm runs a discovery task's rollouts; a QA search's questions run locally or on BullMQ workers (--queue)",
      );
    const method = await loadMethod(settings.method ?? "harnessttt");
    const params = methodParams(method, settings.methodParams ?? {});
    if (method.name === "harnessttt") gateMode(params as TttParams, settings.proposals);
    await checkSeed(settings, runDir, Boolean(o.resume));
    // A QA search's modules (benchmarks, scorers) load only for one: a discovery run or its replay needs none of them.
    const { optimizeQA } = await import("./optimize-qa.ts");
    return await optimizeQA(settings, runDir, o.onEvent ?? (() => {}), o.nextRound ?? (() => true), summarize, Boolean(o.resume));
  } catch (err) {
    if (!o.resume) started = roundsBegun(runDir);
    throw err;
  } finally {
    if (started) held.lock.release();
    else held.abandon();
  }
}

/** Whether the run in `runDir` began round 0 (a start that failed before has nothing worth resuming). */
function roundsBegun(runDir: string): boolean {
  if (!existsSync(join(runDir, "hone.db"))) return false;
  const db = openDb(join(runDir, "hone.db"));
  try {
    return anyRound(db);
  } finally {
    db.close();
  }
}

function finish(ctx: RunContext, inc: Incumbent): OptimizeResult {
  const { db, runId, repo, task } = ctx;
  const bestDir = join(ctx.dir, "best");
  repo.materialize(inc.commit, bestDir);
  const cand = candidateOfCommit(db, inc.commit);
  writeFileSync(
    join(bestDir, "spec.yaml"),
    cand?.spec ? toYaml(JSON.parse(cand.spec)) : "# the seed harness: no spec applied\n{}\n",
  );
  writeFileSync(
    join(bestDir, "meta.json"),
    `${JSON.stringify({ candidate: cand?.id ?? "r00-seed", round: cand?.round ?? 0, commit: inc.commit, parent: cand?.round ? cand.parent_commit : null, changed: JSON.parse(cand?.changed ?? "[]"), score: inc.score ?? null, metric: task.metric, direction: task.direction }, null, 2)}\n`,
  );
  const programFile = join(ctx.dir, `best_program${task.programExtension}`);
  writeFileSync(programFile, inc.program);
  const rounds = summarize(db, runId);
  const startScore = rounds[0]?.incumbentScore ?? null;
  finishRun(db, { best_score: inc.score ?? null, best_commit: inc.commit, start_score: startScore, noise: ctx.noise ?? null });
  return {
    runDir: ctx.dir,
    runId,
    bestHarnessPath: bestDir,
    bestScore: inc.score ?? null,
    startScore,
    noise: ctx.noise,
    rounds,
    writeBestProgram: (path: string) => writeFileSync(path, inc.program),
  };
}

export function summarize(db: Db, runId: string): RoundSummary[] {
  return roundRows(db, runId).map((r) => ({
    round: r.round,
    incumbentScore: r.incumbent_score,
    bestScore: r.best_score,
    moved: r.moved === 1,
    candidates: slotSummaries(db, runId, r.round).map((c) => ({ ...c, changed: JSON.parse(c.changed ?? "[]") as string[] })),
  }));
}
