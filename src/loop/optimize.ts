import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { stringify as toYaml } from "yaml";
import { HoneError } from "../errors.ts";
import { applySpec, SpecError } from "../harness/compile.ts";
import { contentHash } from "../harness/files.ts";
import { loadHarness } from "../harness/package.ts";
import { changedFields, type HarnessSpec } from "../harness/spec.ts";
import type { Harness } from "../harness/types.ts";
import { experienceDigest } from "../method/digest.ts";
import { type LoraSettings, loraStep, resumeAdapter } from "../method/lora.ts";
import { propose } from "../method/proposer.ts";
import { advantages, gapReward, REWARD_MIN } from "../method/reward.ts";
import { type CacheMode, defaultCachePath, ResponseStore, withCache } from "../model/cache.ts";
import { seedFrom } from "../model/offline/rng.ts";
import { OpenAICompatibleModel } from "../model/openai-compatible.ts";
import { type ModelSettings, type ResolvedModel, resolveModel } from "../model/resolve.ts";
import { checkHarness, gateGeneratedCode } from "../sandbox/check.ts";
import { type Db, now, openDb } from "../store/db.ts";
import { HarnessRepo } from "../store/git.ts";
import { resolveTask } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { type Evaluation, isBetter } from "../task/evaluation.ts";
import { evaluateProgram } from "../task/evaluator.ts";
import { EvaluatorPool } from "../task/evaluator-pool.ts";
import { isolationNotice } from "../task/python-env.ts";
import { EvaluationRecords, recordingEvaluator } from "../task/recorded-evaluations.ts";
import type { SlurmSettings } from "./distributed/slurm.ts";
import { HONE_VERSION, type IdentityParts } from "./identity.ts";
import { finishedRolloutIds, recordRollout, rolloutDirFinished, roundRollouts } from "./rollout-records.ts";
import { DEFAULT_HARNESS } from "./run.ts";
import { LocalRunner, type RolloutJob, type Runner } from "./runner.ts";

export const DEFAULT_PROPOSER_HARNESS = resolve(DEFAULT_HARNESS, "..", "proposer");

export interface OptimizeSettings {
  task: string;
  tasksDir?: string;
  seedHarness: string;
  proposerHarness: string;
  executor: Partial<ModelSettings> & { model: string };
  proposer: Partial<ModelSettings> & { model: string };
  rounds: number;
  proposalsPerRound: number;
  maxMetricCalls: number;
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
}

export type OptimizeEvent =
  | { type: "start"; runDir: string; resumed: boolean; task: string; rounds: number }
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
      rewards: number[];
    }
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
  rounds: RoundSummary[];
  writeBestProgram(path: string): void;
}

interface Incumbent {
  commit: string;
  dir: string;
  program: string;
  evaluation: Evaluation;
  score?: number;
}

const pad = (n: number) => String(n).padStart(2, "0");
const candidateId = (round: number, slot: number) => `r${pad(round)}-k${slot}`;

/** Everything a run needs, opened once: records, versions, task, models, evaluator, runner. */
class RunContext {
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

async function open(
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
  emit({ type: "start", runDir, resumed, task: task.id, rounds: settings.rounds });
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

export type RunnerFactory = (o: { task: DiscoveryTask; settings: OptimizeSettings; runDir: string }) => Runner | undefined;

export interface OptimizeOptions {
  outDir: string;
  resume?: boolean;
  /** With resume: options that may change for the rest of the run (everything else comes from hone.db). */
  overrides?: { rounds?: number; concurrency?: number };
  onEvent?: (e: OptimizeEvent) => void;
  runner?: RunnerFactory;
}

/**
 * `hone optimize`: learn the harness at test time. Round 0 rolls out the seed harness; each later round the
 * proposer writes K specs, each is compiled, gated and rolled out from the incumbent program under the same
 * budget; rewards and advantages are recorded; the best program and the harness that found it carry into the next
 * round only when strictly better. Every candidate is a commit; every measurement is a row in hone.db.
 */
export async function optimize(settingsIn: OptimizeSettings, o: OptimizeOptions): Promise<OptimizeResult> {
  const runDir = resolve(o.outDir);
  const emit = o.onEvent ?? (() => {});
  let settings = settingsIn;
  if (o.resume) {
    if (!existsSync(join(runDir, "hone.db")))
      throw new HoneError("usage", `${runDir} has no hone.db to resume; start a run with --out ${o.outDir}`);
    const db = openDb(join(runDir, "hone.db"));
    const row = db.prepare("SELECT config FROM runs WHERE id = 'run'").get() as { config: string } | undefined;
    db.close();
    if (!row) throw new HoneError("usage", `${runDir}: the run was never started; remove the folder and start again`);
    settings = {
      ...JSON.parse(row.config),
      ...Object.fromEntries(Object.entries(o.overrides ?? {}).filter(([, v]) => v !== undefined)),
    };
  } else if (existsSync(runDir) && readdirSync(runDir).some((f) => !f.startsWith("hone.db.new"))) {
    throw new HoneError("usage", `${runDir} already exists and is not empty; choose another --out, or --resume it`);
  }
  // Check the seed package (and the task) before creating anything.
  const task = await resolveTask(settings.task, settings.tasksDir);
  const seedReport = await checkHarness(settings.seedHarness, { task });
  if (!seedReport.ok)
    throw new HoneError(
      "badHarness",
      `${settings.seedHarness}: the seed harness is refused:\n  ${seedReport.problems.map((p) => p.message).join("\n  ")}`,
    );
  mkdirSync(runDir, { recursive: true });
  const ctx = await open(settings, runDir, Boolean(o.resume), emit, o.runner);
  try {
    let incumbent = await roundZero(ctx);
    const lora = settings.learning.mode === "lora" ? settings.learning.lora : undefined;
    if (o.resume && lora) {
      const last =
        (ctx.db.prepare("SELECT MAX(round) AS r FROM rounds WHERE status = 'finished'").get() as { r: number | null }).r ?? 0;
      const adapter = await resumeAdapter(runDir, lora, last, settings.proposer);
      if (adapter) ctx.proposer = await resolveModel({ ...(settings.proposer as ModelSettings), model: adapter });
    }
    for (let round = 1; round <= settings.rounds; round++) incumbent = await runRound(ctx, round, incumbent);
    return finish(ctx, incumbent);
  } finally {
    await ctx.close();
  }
}

async function roundZero(ctx: RunContext): Promise<Incumbent> {
  const { db, runId, repo, task, settings } = ctx;
  const seedDir = join(ctx.dir, "candidates", "r00-seed");
  let commit = repo.resolve("refs/candidates/r00-seed");
  if (!commit) {
    rmSync(seedDir, { recursive: true, force: true });
    const src = loadHarness(settings.seedHarness, { generatedCode: gateGeneratedCode });
    mkdirSync(seedDir, { recursive: true });
    for (const f of src.files) {
      mkdirSync(dirname(join(seedDir, f)), { recursive: true });
      copyFileSync(join(src.dir, f), join(seedDir, f));
    }
    commit = await repo.commitDir(seedDir, "r00: seed harness", undefined, 0);
    repo.createRef("refs/candidates/r00-seed", commit);
    repo.fastForwardMain(commit);
  } else if (!existsSync(join(seedDir, "agent.yaml"))) repo.materialize(commit, seedDir);
  const seedHarness = loadHarness(seedDir, { generatedCode: gateGeneratedCode });
  db.prepare(
    "INSERT OR IGNORE INTO candidates (id, run_id, round, slot, parent_commit, commit_sha, ref, content_hash, spec, changed, status) VALUES (?, ?, 0, 0, ?, ?, 'refs/candidates/r00-seed', ?, NULL, '[]', 'seed')",
  ).run("r00-seed", runId, commit, commit, seedHarness.contentHash);

  const start = await ctx.evaluate(task.seedProgram);
  if (!start.valid && start.reason && /raised|without a result|has no "/.test(start.reason)) {
    throw new HoneError("evaluatorFailed", `the evaluator failed on the seed program ${task.seedPath}: ${start.reason}`);
  }
  const seed: Incumbent = {
    commit,
    dir: seedDir,
    program: task.seedProgram,
    evaluation: start,
    score: start.valid ? start.score : undefined,
  };
  db.prepare(
    "INSERT OR IGNORE INTO rounds (run_id, round, status, incumbent_commit, incumbent_score, started_at) VALUES (?, 0, 'running', ?, ?, ?)",
  ).run(runId, commit, seed.score ?? null, now());
  ctx.emit({ type: "round_start", round: 0, incumbentScore: seed.score ?? null });
  const job: RolloutJob = {
    id: "r00-seed",
    harnessDir: seedDir,
    startProgram: seed.program,
    startEvaluation: start,
    seed: seedFrom(settings.seed, 0, 0),
    maxEvals: settings.maxMetricCalls,
    outDir: join(ctx.dir, "rollouts", "r00-seed"),
  };
  const done = db.prepare("SELECT status FROM rounds WHERE run_id = ? AND round = 0").get(runId) as
    | { status: string }
    | undefined;
  if (done?.status === "finished") return incumbentAfter(ctx, 0, seed);
  await runJobs(ctx, 0, [{ job, candidate: "r00-seed", kind: "baseline" }]);
  return ratchet(ctx, 0, seed, [{ candidate: "r00-seed", commit, dir: seedDir }]);
}

interface JobSpec {
  job: RolloutJob;
  candidate: string;
  kind: "candidate" | "parent" | "baseline";
}

/** Runs the jobs not yet recorded; a finished rollout found on disk but not in hone.db is recorded, not re-run. */
async function runJobs(ctx: RunContext, round: number, specs: JobSpec[]): Promise<void> {
  const done = finishedRolloutIds(ctx.db, ctx.runId);
  const pending: JobSpec[] = [];
  for (const s of specs) {
    if (done.has(s.job.id)) continue;
    if (rolloutDirFinished(s.job.outDir)) {
      recordRollout(ctx.db, ctx.runId, round, s.candidate, s.kind, s.job.id, s.job.outDir, s.job.seed, ctx.identityBase);
      continue;
    }
    pending.push(s);
  }
  if (pending.length === 0) return;
  const byId = new Map(pending.map((p) => [p.job.id, p]));
  for await (const r of ctx.runner.run(pending.map((p) => p.job))) {
    const s = byId.get(r.id) as JobSpec;
    if (r.error || !rolloutDirFinished(s.job.outDir)) {
      const error = r.error ?? "the rollout left no result";
      ctx.emit({ type: "rollout_done", round, job: r.id, score: null, error });
      // A replay that meets an unrecorded request cannot go on faithfully.
      if (/replay: this request was never recorded/.test(error)) throw new HoneError("runFailed", `rollout ${r.id}: ${error}`);
      // Anything else (a cancelled or timed-out cluster job, a worker error) is a failed measurement, never a score.
      ctx.db
        .prepare(
          "INSERT OR REPLACE INTO rollouts (id, run_id, round, candidate_id, kind, seed, status, error, evals_used, evals_invalid, finished_at) VALUES (?, ?, ?, ?, ?, ?, 'failed', ?, 0, 0, ?)",
        )
        .run(s.job.id, ctx.runId, round, s.candidate, s.kind, s.job.seed, error.slice(0, 2000), now());
      continue;
    }
    recordRollout(ctx.db, ctx.runId, round, s.candidate, s.kind, s.job.id, s.job.outDir, s.job.seed, ctx.identityBase);
    ctx.emit({ type: "rollout_done", round, job: r.id, score: r.outcome?.bestScore ?? null });
  }
}

/** The ratchet: the best program of the round and its harness move in only when strictly better. */
function ratchet(
  ctx: RunContext,
  round: number,
  inc: Incumbent,
  candidates: { candidate: string; commit: string; dir: string }[],
): Incumbent {
  const { db, runId, task } = ctx;
  const rows = roundRollouts(db, runId, round).filter((r) => r.kind !== "parent");
  let best: { row: (typeof rows)[number]; cand: (typeof candidates)[number] } | undefined;
  for (const c of candidates) {
    const row = rows.find((r) => r.candidate_id === c.candidate);
    const own = row ? (task.direction === "maximize" ? row.own_max : row.own_min) : null;
    if (!row || own === null || row.status !== "completed" || !row.best_program) continue;
    const current = best ? (task.direction === "maximize" ? best.row.own_max : best.row.own_min) : inc.score;
    if (isBetter(own, current ?? undefined, task.direction)) best = { row, cand: c };
  }
  const bestOwn = best ? (task.direction === "maximize" ? best.row.own_max : best.row.own_min) : null;
  let next = inc;
  if (best && bestOwn !== null) {
    if (!ctx.repo.fastForwardMain(best.cand.commit, inc.commit))
      throw new Error(`main cannot fast-forward to ${best.cand.commit}`);
    next = {
      commit: best.cand.commit,
      dir: best.cand.dir,
      program: best.row.best_program as string,
      score: bestOwn,
      evaluation: { valid: true, score: bestOwn, metrics: {}, artifacts: {}, seconds: 0 },
    };
  }
  db.prepare(
    "UPDATE rounds SET status = 'finished', best_score = ?, moved = ?, finished_at = ? WHERE run_id = ? AND round = ?",
  ).run(bestOwn, next !== inc ? 1 : 0, now(), runId, round);
  return next;
}

async function runRound(ctx: RunContext, round: number, inc: Incumbent): Promise<Incumbent> {
  const { db, runId, repo, task, settings } = ctx;
  const existing = db
    .prepare("SELECT status, proposer_completion, proposer_prompt FROM rounds WHERE run_id = ? AND round = ?")
    .get(runId, round) as { status: string; proposer_completion: string | null; proposer_prompt: string | null } | undefined;
  if (existing?.status === "finished") return incumbentAfter(ctx, round, inc);
  if (!existing)
    db.prepare(
      "INSERT INTO rounds (run_id, round, status, incumbent_commit, incumbent_score, started_at) VALUES (?, ?, 'proposing', ?, ?, ?)",
    ).run(runId, round, inc.commit, inc.score ?? null, now());
  ctx.emit({ type: "round_start", round, incumbentScore: inc.score ?? null });
  const incHarness = loadHarness(inc.dir, { generatedCode: gateGeneratedCode });

  let cands = db
    .prepare("SELECT id, slot, status, commit_sha, spec FROM candidates WHERE run_id = ? AND round = ? ORDER BY slot")
    .all(runId, round) as {
    id: string;
    slot: number;
    status: string;
    commit_sha: string | null;
    spec: string | null;
  }[];
  if (cands.length === 0) {
    const digest = experienceDigest(db, runId, {
      tokenBudget: settings.learning.digestTokens,
      metric: task.metric,
      direction: task.direction,
    });
    const check = async (spec: HarnessSpec, slot: number): Promise<string[]> => {
      const dir = join(ctx.dir, "candidates", candidateId(round, slot));
      try {
        applySpec(inc.dir, spec, dir);
      } catch (err) {
        if (err instanceof SpecError) return [err.message];
        throw err;
      }
      const report = await checkHarness(dir, { task });
      return report.problems.map((p) => `[${p.check}] ${p.message.replace(`${dir}/`, "")}`);
    };
    const recorded = existing?.proposer_completion ? JSON.parse(existing.proposer_completion) : undefined;
    const proposal = await propose(
      ctx.proposer.model,
      ctx.proposerHarness,
      {
        task,
        incumbent: { harness: incHarness, program: inc.program, score: inc.score },
        digest,
        round,
        k: settings.proposalsPerRound,
      },
      check,
      seedFrom(settings.seed, round, "proposer"),
      recorded,
    );
    for (const r of proposal.responses) {
      db.prepare(
        "INSERT INTO model_calls (run_id, role, rollout_id, round, latency_ms, prompt_tokens, completion_tokens, attempts, cached, faults) VALUES (?, 'proposer', NULL, ?, ?, ?, ?, ?, ?, ?)",
      ).run(
        runId,
        round,
        r.latency_ms,
        r.usage.prompt_tokens,
        r.usage.completion_tokens,
        r.attempts,
        r.cached ? 1 : 0,
        r.faults ? JSON.stringify(r.faults) : null,
      );
    }
    // Harness versions first (in parallel: each is a few git processes), then every record in one transaction.
    const commits = await Promise.all(
      proposal.slots.map(async (s) => {
        const id = candidateId(round, s.slot);
        const dir = join(ctx.dir, "candidates", id);
        if (!s.spec) {
          rmSync(dir, { recursive: true, force: true });
          return null;
        }
        const commit = await repo.commitDir(
          dir,
          `${id}: ${changedFields(s.spec).join(", ") || "change"}`,
          inc.commit,
          round * 100 + s.slot + 1,
        );
        repo.createRef(`refs/candidates/${id}`, commit);
        return commit;
      }),
    );
    const store = db.transaction(() => {
      db.prepare(
        "UPDATE rounds SET proposer_model = ?, proposer_prompt = ?, proposer_completion = ?, status = 'rolling_out' WHERE run_id = ? AND round = ?",
      ).run(
        ctx.proposer.modelName,
        JSON.stringify(proposal.messages),
        JSON.stringify({ completion: proposal.completion, repairCompletion: proposal.repairCompletion }),
        runId,
        round,
      );
      for (const s of proposal.slots) {
        const id = candidateId(round, s.slot);
        const dir = join(ctx.dir, "candidates", id);
        const commit = commits[s.slot] ?? null;
        db.prepare(
          "INSERT INTO candidates (id, run_id, round, slot, parent_commit, commit_sha, ref, content_hash, spec, changed, status, gate_error, repaired) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ).run(
          id,
          runId,
          round,
          s.slot,
          inc.commit,
          commit,
          commit ? `refs/candidates/${id}` : null,
          s.spec ? contentHash(dir) : null,
          s.spec ? JSON.stringify(s.spec) : s.raw === undefined ? null : JSON.stringify(s.raw),
          JSON.stringify(s.spec ? changedFields(s.spec) : []),
          s.spec ? (s.repaired ? "repaired" : "valid") : "invalid",
          s.problems.length ? s.problems.join("; ").slice(0, 4000) : null,
          s.repaired ? 1 : 0,
        );
      }
    });
    store();
    cands = db
      .prepare("SELECT id, slot, status, commit_sha, spec FROM candidates WHERE run_id = ? AND round = ? ORDER BY slot")
      .all(runId, round) as typeof cands;
  }
  ctx.emit({
    type: "proposals",
    round,
    valid: cands.filter((c) => c.status === "valid").length,
    repaired: cands.filter((c) => c.status === "repaired").length,
    invalid: cands.filter((c) => c.status === "invalid").length,
  });

  const runnable = cands.filter((c) => c.commit_sha);
  for (const c of runnable) {
    const dir = join(ctx.dir, "candidates", c.id);
    if (!existsSync(join(dir, "agent.yaml"))) repo.materialize(c.commit_sha as string, dir);
  }
  const jobs: JobSpec[] = [];
  for (const c of runnable) {
    const seed = seedFrom(settings.seed, round, c.slot);
    const base = { startProgram: inc.program, startEvaluation: inc.evaluation, seed, maxEvals: settings.maxMetricCalls };
    jobs.push({
      job: { ...base, id: c.id, harnessDir: join(ctx.dir, "candidates", c.id), outDir: join(ctx.dir, "rollouts", c.id) },
      candidate: c.id,
      kind: "candidate",
    });
    if (settings.paired)
      jobs.push({
        job: { ...base, id: `${c.id}-parent`, harnessDir: inc.dir, outDir: join(ctx.dir, "rollouts", `${c.id}-parent`) },
        candidate: c.id,
        kind: "parent",
      });
  }
  await runJobs(ctx, round, jobs);

  // Rewards and advantages for every slot; invalid and repaired proposals are charged the minimum.
  const rows = roundRollouts(db, runId, round);
  const own = (r: (typeof rows)[number] | undefined) =>
    r && r.status === "completed" ? ((task.direction === "maximize" ? r.own_max : r.own_min) ?? undefined) : undefined;
  const rewards = cands.map((c) => {
    if (c.status !== "valid") return REWARD_MIN;
    const mine = rows.find((r) => r.candidate_id === c.id && r.kind === "candidate");
    const baseline = settings.paired
      ? (own(rows.find((r) => r.candidate_id === c.id && r.kind === "parent")) ?? inc.score)
      : inc.score;
    return gapReward(own(mine), baseline, task.reference?.value, task.direction);
  });
  const adv = advantages(rewards);
  const update = db.prepare("UPDATE candidates SET reward = ?, advantage = ?, score = ? WHERE id = ?");
  db.transaction(() => {
    cands.forEach((c, i) => {
      update.run(
        rewards[i] ?? null,
        adv[i] ?? null,
        own(rows.find((r) => r.candidate_id === c.id && r.kind === "candidate")) ?? null,
        c.id,
      );
    });
  })();

  const next = ratchet(
    ctx,
    round,
    inc,
    runnable.map((c) => ({ candidate: c.id, commit: c.commit_sha as string, dir: join(ctx.dir, "candidates", c.id) })),
  );
  ctx.emit({
    type: "round_end",
    round,
    incumbentScore: next.score ?? null,
    bestScore: (
      db.prepare("SELECT best_score FROM rounds WHERE run_id = ? AND round = ?").get(runId, round) as {
        best_score: number | null;
      }
    ).best_score,
    moved: next !== inc,
    rewards,
  });

  if (settings.learning.mode === "lora" && settings.learning.lora) {
    const adapter = await loraStep(ctx.db, ctx.runId, round, ctx.dir, settings.learning.lora, settings.proposer);
    if (adapter) ctx.proposer = await resolveModel({ ...(settings.proposer as ModelSettings), model: adapter });
  }
  return next;
}

/** On resume: the incumbent after a finished round, rebuilt from the records. */
function incumbentAfter(ctx: RunContext, round: number, inc: Incumbent): Incumbent {
  const { db, runId, task } = ctx;
  const r = db.prepare("SELECT moved FROM rounds WHERE run_id = ? AND round = ?").get(runId, round) as { moved: number };
  if (!r.moved) return inc;
  const rows = roundRollouts(db, runId, round).filter((x) => x.kind !== "parent" && x.status === "completed");
  const best = rows
    .map((x) => ({ x, own: task.direction === "maximize" ? x.own_max : x.own_min }))
    .filter((y) => y.own !== null)
    .sort(
      (a, b) =>
        (task.direction === "maximize" ? (b.own as number) - (a.own as number) : (a.own as number) - (b.own as number)) ||
        a.x.candidate_id.localeCompare(b.x.candidate_id),
    )[0];
  if (!best) return inc;
  const c = db.prepare("SELECT commit_sha FROM candidates WHERE id = ?").get(best.x.candidate_id) as { commit_sha: string };
  const dir = join(ctx.dir, "candidates", best.x.candidate_id);
  if (!existsSync(join(dir, "agent.yaml"))) ctx.repo.materialize(c.commit_sha, dir);
  return {
    commit: c.commit_sha,
    dir,
    program: best.x.best_program as string,
    score: best.own as number,
    evaluation: { valid: true, score: best.own as number, metrics: {}, artifacts: {}, seconds: 0 },
  };
}

function finish(ctx: RunContext, inc: Incumbent): OptimizeResult {
  const { db, runId, repo, task } = ctx;
  const bestDir = join(ctx.dir, "best");
  rmSync(bestDir, { recursive: true, force: true });
  repo.materialize(inc.commit, bestDir);
  const cand = db
    .prepare("SELECT id, round, parent_commit, spec, changed FROM candidates WHERE commit_sha = ? ORDER BY round LIMIT 1")
    .get(inc.commit) as { id: string; round: number; parent_commit: string; spec: string | null; changed: string } | undefined;
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
  const start = db.prepare("SELECT incumbent_score FROM rounds WHERE run_id = ? AND round = 0").get(runId) as {
    incumbent_score: number | null;
  };
  const rounds = summarize(db, runId);
  db.prepare("UPDATE runs SET status = 'finished', finished_at = ?, summary = ? WHERE id = ?").run(
    now(),
    JSON.stringify({ best_score: inc.score ?? null, best_commit: inc.commit, start_score: start.incumbent_score }),
    runId,
  );
  return {
    runDir: ctx.dir,
    runId,
    bestHarnessPath: bestDir,
    bestScore: inc.score ?? null,
    startScore: start.incumbent_score,
    rounds,
    writeBestProgram: (path: string) => writeFileSync(path, inc.program),
  };
}

export function summarize(db: Db, runId: string): RoundSummary[] {
  const rounds = db
    .prepare("SELECT round, incumbent_score, best_score, moved FROM rounds WHERE run_id = ? ORDER BY round")
    .all(runId) as {
    round: number;
    incumbent_score: number | null;
    best_score: number | null;
    moved: number;
  }[];
  return rounds.map((r) => ({
    round: r.round,
    incumbentScore: r.incumbent_score,
    bestScore: r.best_score,
    moved: r.moved === 1,
    candidates: (
      db
        .prepare(
          "SELECT slot, status, score, reward, advantage, changed FROM candidates WHERE run_id = ? AND round = ? ORDER BY slot",
        )
        .all(runId, r.round) as {
        slot: number;
        status: string;
        score: number | null;
        reward: number | null;
        advantage: number | null;
        changed: string | null;
      }[]
    ).map((c) => ({ ...c, changed: JSON.parse(c.changed ?? "[]") as string[] })),
  }));
}
