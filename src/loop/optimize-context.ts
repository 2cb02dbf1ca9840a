// The context of an optimize run: its records, versions, task, models (with cache or replay), evaluator and runner.
import { join } from "node:path";
import { loadHarness } from "../harness/package.ts";
import { isHarnessFolder } from "../harness/program.ts";
import type { Harness } from "../harness/types.ts";
import type { Budget, Candidate, Direction, TaskBrief } from "../method/method.ts";
import { type ProposerTask, proposerTaskOf } from "../method/proposer.ts";
import { type ResolvedModel, resolveModel } from "../model/resolve.ts";
import { checkHarness } from "../sandbox/check.ts";
import { withoutPassword } from "../secret-url.ts";
import { commitOfCandidate, contentHashOfCommit } from "../store/candidates.ts";
import { createRunDb, type Db, extendRunRounds, openDb, runQueueKey } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import { resolveTask } from "../task/builtin.ts";
import { taskContentHash } from "../task/content-hash.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { evaluateProgram } from "../task/evaluator.ts";
import { EvaluatorPool } from "../task/evaluator-pool.ts";
import { isolationNotice, primePython } from "../task/python-env.ts";
import type { ScopedEvaluate } from "../task/recorded-evaluations.ts";
import { HONE_VERSION, type IdentityParts } from "./identity.ts";
import type { OptimizeEvent, OptimizeSettings, RunnerFactory } from "./optimize.ts";
import type { RunNoise } from "./optimize-noise.ts";
import { Recording } from "./recording.ts";
import { remoteRunner } from "./remote-runner.ts";
import { LocalRunner, type Runner } from "./runner.ts";

export interface Incumbent {
  commit: string;
  dir: string;
  program: string;
  evaluation: Evaluation;
  score?: number;
}

export const pad = (n: number) => String(n).padStart(2, "0");
export const candidateId = (round: number, slot: number) => `r${pad(round)}-k${slot}`;

/**
 * What the search is over, as the method layer needs it whatever the target: a discovery task or a QA benchmark.
 * What a method or the proposer is told comes from here (never the evaluator, gold answers, or a hidden reference).
 */
export interface SearchTarget {
  kind: "discovery" | "qa";
  id: string;
  metric: string;
  direction: Direction;
  /** What a method is told (Method's TaskBrief). */
  brief: TaskBrief;
  /** What hone's spec proposer is told. */
  proposerTask: ProposerTask;
  /** Rewards are shown to the proposer only where they cannot give a hidden reference value away. */
  showRewards: boolean;
  /** The gate every compiled candidate passes: the problems, empty when it is accepted. */
  gate(dir: string): Promise<string[]>;
}

/** The gate's problems for a compiled candidate folder, with paths relative to it. */
export async function gateProblems(dir: string, task?: DiscoveryTask): Promise<string[]> {
  const report = await checkHarness(dir, { task });
  return report.problems.map((p) => `[${p.check}] ${p.message.replace(`${dir}/`, "")}`);
}

/** A discovery task as the search's target: no evaluator, no reference unless the task allows it. */
export function discoveryTarget(task: DiscoveryTask, maxEvals: number): SearchTarget {
  const reference = task.showReference ? task.reference?.value : undefined;
  return {
    kind: "discovery",
    id: task.id,
    metric: task.metric,
    direction: task.direction,
    brief: {
      kind: "discovery",
      id: task.id,
      description: task.description,
      metric: task.metric,
      direction: task.direction,
      reference,
    },
    proposerTask: proposerTaskOf(task, maxEvals),
    showRewards: task.reference === undefined || Boolean(task.showReference),
    gate: (dir) => gateProblems(dir, task),
  };
}

/** What every search context gives the method layer (proposals, archive, keep), discovery or QA. */
export interface SearchContext {
  readonly dir: string;
  readonly runId: string;
  readonly db: Db;
  readonly repo: HarnessRepo;
  readonly settings: OptimizeSettings;
  proposer: ResolvedModel;
  readonly proposerHarness: Harness;
  readonly emit: (e: OptimizeEvent) => void;
  readonly recording: Recording;
  readonly target: SearchTarget;
  candidateDir(id: string, commit: string): string;
  /** What the spec proposer is shown a candidate works on: its best program (discovery) or its train results (QA). */
  workOf(c: Candidate | undefined): { program?: string; results?: string };
  /** The budget as a method is told it. */
  budget(): Budget;
}

/** Everything a discovery run needs, opened once: records, versions, task, models, evaluator, runner. */
export class RunContext implements SearchContext {
  constructor(
    readonly dir: string,
    readonly runId: string,
    readonly db: Db,
    readonly repo: HarnessRepo,
    readonly task: DiscoveryTask,
    readonly settings: OptimizeSettings,
    readonly executor: ResolvedModel,
    public proposer: ResolvedModel,
    readonly evaluate: ScopedEvaluate,
    readonly runner: Runner,
    readonly proposerHarness: Harness,
    readonly emit: (e: OptimizeEvent) => void,
    readonly recording: Recording,
    readonly close: () => Promise<void>,
  ) {
    this.target = discoveryTarget(task, settings.maxEvals);
  }
  readonly target: SearchTarget;
  identityBase: Omit<IdentityParts, "sampling" | "harness"> | undefined;
  /** Rollout `id`'s identity without its sampling and harness: in a replay, with the evaluator it was recorded under. */
  identityOf(id: string): Omit<IdentityParts, "sampling" | "harness"> | undefined {
    const base = this.identityBase;
    const recorded = this.recording.recordedEvaluator(id);
    return base && recorded ? { ...base, task: { ...base.task, evaluator: recorded.runtime } } : base;
  }
  /** The run's noise estimate, measured in round 0 (or read back on resume). */
  noise: RunNoise | undefined;
  /** The seed program and its evaluation: where rollouts of a method that starts from the seed begin. */
  seedStart: { program: string; evaluation: Evaluation } | undefined;

  /** The harness version of a candidate as a folder (materialized from git when a kill removed it). */
  candidateDir(id: string, commit: string): string {
    const dir = join(this.dir, "candidates", id);
    if (!isHarnessFolder(dir)) this.repo.materialize(commit, dir);
    return dir;
  }
  workOf(c: Candidate | undefined): { program?: string } {
    return { program: c?.program ?? this.task.seedProgram };
  }
  budget(): Budget {
    // The seed harness's rollout and K rollouts a round, each of at most maxEvals evaluator calls.
    return {
      unit: "evaluator_calls",
      total: this.settings.maxEvals * (1 + this.settings.rounds * this.settings.proposals),
      used: 0,
    };
  }
  commitOf(id: string): string | null {
    return commitOfCandidate(this.db, id);
  }
  contentHashOf(commit: string): string | null {
    return contentHashOfCommit(this.db, commit);
  }
}

/** What optimize() starts before its checks, so that set-up costs the slowest of them, not their sum. */
export interface EarlyStart {
  /** The run's warm pool where this process evaluates (not in a replay, nor with workers or Slurm jobs: there on first use). */
  pool?: Promise<EvaluatorPool>;
  /** Both roles' endpoints (the offline model's threads), except in a replay, which contacts none. */
  endpoints?: [Promise<ResolvedModel>, Promise<ResolvedModel>];
  /** When optimize() was called (performance.now()), for the start event's set-up time. */
  calledAt?: number;
}

/**
 * Starts the warm pool and the models' endpoints now: the pool's processes load the evaluator and the offline
 * model's threads their code while this one checks the task and the seed package; open() takes them over.
 */
export function startEarly(settings: OptimizeSettings, task: DiscoveryTask): EarlyStart {
  if (settings.cache?.mode === "replay") return {};
  const local = settings.warmPool && !settings.queue && !settings.slurm;
  const pool = local ? EvaluatorPool.start(task, poolOptions(settings)) : undefined;
  pool?.catch(() => {}); // a pool that cannot start fails the first evaluation, as one started then would
  const endpoints: EarlyStart["endpoints"] = [resolveModel(settings.executor), resolveModel(settings.proposer)];
  for (const e of endpoints) e.catch(() => {}); // open() meets the error
  return { pool, endpoints };
}

/** Closes what startEarly() started, for a run refused before open() took it over. */
export async function closeEarly(early: EarlyStart): Promise<void> {
  await Promise.all([
    early.pool?.then((p) => p.close()).catch(() => {}),
    ...(early.endpoints ?? []).map((e) => e.then((m) => m.close()).catch(() => {})),
  ]);
}

/** One evaluator per rollout at once, at most 4; a program sandbox made ahead for each rollout at once. */
const poolOptions = (settings: OptimizeSettings) => ({
  size: Math.min(4, Math.max(1, settings.concurrency)),
  ahead: settings.concurrency,
});

export async function open(
  settings: OptimizeSettings,
  runDir: string,
  resumed: boolean,
  emit: (e: OptimizeEvent) => void,
  makeRunner?: RunnerFactory,
  early: EarlyStart = {},
): Promise<RunContext> {
  const task = await resolveTask(settings.task as string, settings.tasksDir, { check: settings.cache?.mode !== "replay" });
  const proposerHarness = loadHarness(settings.proposerHarness);
  const dbPath = join(runDir, "hone.db");
  createRunDb(dbPath, "optimize", settings);
  const db = openDb(dbPath, { replay: settings.replayOf !== undefined });
  if (resumed) extendRunRounds(db, settings.rounds);
  const repo = HarnessRepo.forRun(join(runDir, "harnesses.git"));

  // Every model call and evaluation of the run is recorded in its hone.db, so the run can be replayed.
  const recording = new Recording(runDir, settings);
  // The pool's promise, not the pool: concurrent first evaluations (a resumed round's rollouts) must share one pool,
  // or the one started first is never closed and keeps the process alive. It starts early, from optimize().
  const options = poolOptions(settings);
  let pool: Promise<EvaluatorPool> | undefined = early.pool;
  const notice = recording.mode === "replay" ? undefined : isolationNotice();
  if (notice) emit({ type: "notice", text: notice });
  const onNotice = (text: string) => emit({ type: "notice", text });
  const live = async (p: string) => {
    if (!settings.warmPool) return evaluateProgram(task, p);
    pool ??= EvaluatorPool.start(task, { ...options, onNotice });
    const warm = await pool;
    warm.onNotice ??= onNotice; // the pool started early, before there was a run to tell
    return warm.evaluate(p);
  };
  const taskHash = taskContentHash(task);
  const evaluate = recording.evaluator(live, taskHash);
  // Set up beside them: the fresh probe confirming a cached one (optimize() primed it), nothing to wait for otherwise.
  const python = recording.mode === "replay" ? undefined : primePython(task.python);
  const [executorAt, proposerAt] = early.endpoints ?? [];
  const models = Promise.all([recording.model(settings.executor, executorAt), recording.model(settings.proposer, proposerAt)]);
  // A failure here leaves the pool and the endpoints to optimize(), which closes what it started early.
  const [[executor, proposer], , runtime] = await Promise.all([models, python, recording.evaluatorRuntime(task, taskHash)]);
  await pool?.catch(() => undefined);
  const mode = recording.mode;
  const runId = "run";
  const queued =
    mode === "replay"
      ? undefined
      : await remoteRunner({
          queue: settings.queue,
          slurm: settings.slurm,
          runKey: runQueueKey(db, "opt"),
          runDir,
          task,
          taskRef: settings.task as string,
          tasksDir: settings.tasksDir,
          executor: settings.executor,
          timeLimitSec: settings.timeLimitSec,
          recording,
        });
  const runner =
    makeRunner?.({ task, settings, runDir }) ??
    queued ??
    new LocalRunner({
      task,
      model: executor.model,
      evaluate,
      concurrency: settings.concurrency,
      timeLimitSec: settings.timeLimitSec,
      // Each trajectory event as it happens, for live progress (job ids start with their round: r02-k1).
      onEvent: (job, event) => emit({ type: "rollout_event", round: Number(/^r(\d+)/.exec(job)?.[1] ?? 0), job, event }),
    });
  const ctx = new RunContext(
    runDir,
    runId,
    db,
    repo,
    task,
    settings,
    executor,
    proposer,
    evaluate,
    runner,
    proposerHarness,
    emit,
    recording,
    async () => {
      await runner.close();
      if (pool) (await pool.catch(() => undefined))?.close();
      await executor.close();
      await ctx.proposer.close();
      recording.close();
      db.close();
    },
  );
  ctx.identityBase = {
    task: { id: task.id, content: taskHash, metric: task.metric, direction: task.direction, evaluator: runtime },
    executor: {
      endpoint: settings.executor.model === "offline" ? "offline" : withoutPassword(settings.executor.baseUrl ?? ""),
      model: settings.executor.model,
      dialect: settings.executor.dialect ?? "vllm",
    },
    budget: { maxEvals: settings.maxEvals, timeoutSec: task.timeoutSec },
    hone: HONE_VERSION,
  };
  emit({
    type: "start",
    runDir,
    resumed,
    task: task.id,
    rounds: settings.rounds,
    paired: settings.paired,
    maxEvals: settings.maxEvals,
    setupSeconds: early.calledAt === undefined ? undefined : (performance.now() - early.calledAt) / 1000,
  });
  return ctx;
}
