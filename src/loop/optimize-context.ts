// The context of an optimize run: its records, versions, task, models (with cache or replay), evaluator and runner.
import { existsSync, renameSync } from "node:fs";
import { join, resolve } from "node:path";
import { contentHash } from "../harness/files.ts";
import { loadHarness } from "../harness/package.ts";
import type { Harness } from "../harness/types.ts";
import { type CacheMode, defaultCachePath, ResponseStore, withCache } from "../model/cache.ts";
import { OpenAICompatibleModel } from "../model/openai-compatible.ts";
import { type ModelSettings, type ResolvedModel, resolveModel } from "../model/resolve.ts";
import { type Db, now, openDb } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import { resolveTask } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { evaluateProgram } from "../task/evaluator.ts";
import { EvaluatorPool } from "../task/evaluator-pool.ts";
import { isolationNotice } from "../task/python-env.ts";
import { EvaluationRecords, recordingEvaluator } from "../task/recorded-evaluations.ts";
import { HONE_VERSION, type IdentityParts } from "./identity.ts";
import type { OptimizeEvent, OptimizeSettings, RunnerFactory } from "./optimize.ts";
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

/** Everything a run needs, opened once: records, versions, task, models, evaluator, runner. */
export class RunContext {
  constructor(
    readonly dir: string,
    readonly runId: string,
    readonly db: Db,
    readonly repo: HarnessRepo,
    readonly task: DiscoveryTask,
    readonly settings: OptimizeSettings,
    readonly executor: ResolvedModel,
    public proposer: ResolvedModel,
    readonly evaluate: (program: string) => Promise<Evaluation>,
    readonly runner: Runner,
    readonly proposerHarness: Harness,
    readonly emit: (e: OptimizeEvent) => void,
    readonly close: () => Promise<void>,
  ) {}
  identityBase: Omit<IdentityParts, "sampling" | "harness"> | undefined;
}

/** A model served only from records: no endpoint is contacted; an unrecorded request is an error. */
function replayModel(m: OptimizeSettings["executor"], cache: { read: ResponseStore[]; write: ResponseStore[] }): ResolvedModel {
  const client = new OpenAICompatibleModel(
    {
      baseUrl: "http://replay.invalid/v1",
      model: m.model,
      dialect: m.model === "offline" ? "vllm" : m.dialect,
      keepSampling: m.keepSampling,
      stream: m.stream,
    },
    {},
  );
  return {
    model: withCache(client, { mode: "replay", ...cache }),
    baseUrl: "replay",
    modelName: m.model,
    offline: m.model === "offline",
    close: async () => {},
  };
}

export async function open(
  settings: OptimizeSettings,
  runDir: string,
  resumed: boolean,
  emit: (e: OptimizeEvent) => void,
  makeRunner?: RunnerFactory,
): Promise<RunContext> {
  const task = await resolveTask(settings.task, settings.tasksDir);
  const proposerHarness = loadHarness(settings.proposerHarness);
  // hone.db appears with the run's row already in it (built under another name, then renamed), so a run killed at
  // any point either has nothing to resume or can be resumed from its stored options.
  const dbPath = join(runDir, "hone.db");
  if (!existsSync(dbPath)) {
    const fresh = openDb(`${dbPath}.new`);
    const insert =
      "INSERT OR IGNORE INTO runs (id, kind, created_at, status, config) VALUES ('run', 'optimize', ?, 'running', ?)";
    fresh.prepare(insert).run(now(), JSON.stringify(settings));
    fresh.close();
    renameSync(`${dbPath}.new`, dbPath);
  }
  const db = openDb(dbPath);
  const repo = resolved(join(runDir, "harnesses.git"));
  const notice = isolationNotice();
  if (notice) emit({ type: "notice", text: notice });

  // Every model call and evaluation of the run is recorded in its hone.db, so the run can be replayed.
  const mode: CacheMode = settings.cache?.mode ?? "read-write";
  const runCalls = new ResponseStore(join(runDir, "hone.db"));
  const shared =
    mode === "off"
      ? undefined
      : new ResponseStore(settings.cache?.dir ? join(settings.cache.dir, "requests.db") : defaultCachePath());
  const source = settings.replayOf ? new ResponseStore(join(resolve(settings.replayOf), "hone.db")) : undefined;
  const read = [runCalls, source, shared].filter((x): x is ResponseStore => x !== undefined);
  const write = [runCalls, mode === "read-write" ? shared : undefined].filter((x): x is ResponseStore => x !== undefined);
  const evaluations = new EvaluationRecords(join(runDir, "hone.db"));
  const sourceEvaluations = settings.replayOf ? new EvaluationRecords(join(resolve(settings.replayOf), "hone.db")) : undefined;
  let pool: EvaluatorPool | undefined;
  const live = async (p: string) => {
    if (!settings.warmPool) return evaluateProgram(task, p);
    pool ??= await EvaluatorPool.start(task, { size: Math.min(4, Math.max(1, settings.concurrency)) });
    return pool.evaluate(p);
  };
  const taskHash = contentHash(task.dir);
  const evaluate = recordingEvaluator(
    live,
    taskHash,
    evaluations,
    mode === "replay" ? [evaluations, ...(sourceEvaluations ? [sourceEvaluations] : [])] : [],
  );

  const cached = async (m: OptimizeSettings["executor"]): Promise<ResolvedModel> => {
    if (mode === "replay") return replayModel(m, { read, write });
    const r = await resolveModel(m as ModelSettings);
    return { ...r, model: withCache(r.model, { mode, read, write }) };
  };
  const executor = await cached(settings.executor);
  const proposer = await cached(settings.proposer);
  const runId = "run";
  const queued =
    mode === "replay"
      ? undefined
      : settings.queue
        ? await queueRunner(settings, task, db)
        : settings.slurm
          ? await slurmRunner(settings, task, runDir)
          : undefined;
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
    async () => {
      await runner.close();
      pool?.close();
      await executor.close();
      await ctx.proposer.close();
      for (const s of [runCalls, shared, source]) s?.close();
      evaluations.close();
      sourceEvaluations?.close();
      db.close();
    },
  );
  ctx.identityBase = {
    task: { id: task.id, content: taskHash, metric: task.metric, direction: task.direction },
    executor: {
      endpoint: settings.executor.model === "offline" ? "offline" : (settings.executor.baseUrl ?? ""),
      model: settings.executor.model,
      dialect: settings.executor.dialect ?? "vllm",
    },
    budget: { maxEvals: settings.maxMetricCalls, timeoutSec: task.timeoutSec },
    hone: HONE_VERSION,
  };
  emit({
    type: "start",
    runDir,
    resumed,
    task: task.id,
    rounds: settings.rounds,
    paired: settings.paired,
    maxEvals: settings.maxMetricCalls,
  });
  return ctx;
}

/** The BullMQ runner, loaded only when a queue is used; job ids derive from the run's creation, stable across resumes. */
async function queueRunner(settings: OptimizeSettings, task: DiscoveryTask, db: Db): Promise<Runner> {
  const { BullmqRunner } = await import("./distributed/bullmq.ts");
  const created = (db.prepare("SELECT created_at FROM runs WHERE id = 'run'").get() as { created_at: string }).created_at;
  return new BullmqRunner({
    url: settings.queue as string,
    runKey: `opt-${created.replace(/[^0-9]/g, "")}`,
    task,
    taskRef: task.dir,
    tasksDir: settings.tasksDir,
    executor: settings.executor,
    timeLimitSec: settings.timeLimitSec,
  });
}

async function slurmRunner(settings: OptimizeSettings, task: DiscoveryTask, runDir: string): Promise<Runner> {
  const { SlurmRunner } = await import("./distributed/slurm.ts");
  return new SlurmRunner({
    ...settings.slurm,
    runDir,
    task,
    taskRef: task.dir,
    tasksDir: settings.tasksDir,
    executor: settings.executor,
    timeLimitSec: settings.timeLimitSec,
  });
}

function resolved(gitDir: string): HarnessRepo {
  return existsSync(join(gitDir, "HEAD")) ? new HarnessRepo(gitDir) : HarnessRepo.init(gitDir);
}
