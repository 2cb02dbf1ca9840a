// The rounds of an optimize run: round zero (the seed, its noise, its rollout), a round of proposals, and resuming.
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { HoneError } from "../errors.ts";
import { applySpec, SpecError } from "../harness/compile.ts";
import { contentHash } from "../harness/files.ts";
import { loadHarness } from "../harness/package.ts";
import { changedFields, type HarnessSpec } from "../harness/spec.ts";
import { experienceDigest } from "../method/digest.ts";
import { loraStep } from "../method/lora.ts";
import { propose } from "../method/proposer.ts";
import { methodByName, methodParams } from "../method/registry.ts";
import { forScope } from "../model/cache.ts";
import { seedFrom } from "../model/offline/rng.ts";
import { checkHarness, gateGeneratedCode } from "../sandbox/check.ts";
import {
  bestScoreOf,
  type CandidateInsert,
  insertCandidate,
  recordProposal,
  roundCandidates,
  roundState,
  startRound,
} from "../store/candidates.ts";
import { insertFailedRollout, insertModelCalls } from "../store/rollouts.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { candidateId, type Incumbent, pad, type RunContext } from "./optimize-context.ts";
import { keepWithMethod, proposeWithMethod } from "./optimize-method.ts";
import { comparesRepeats, measureSeedNoise, repeats, validScores } from "./optimize-noise.ts";
import { closeRound, incumbentAfter, ratchet } from "./optimize-ratchet.ts";
import { roundRewards } from "./optimize-rewards.ts";
import { readRecordsFile } from "./recording.ts";
import { finishedRolloutIds, recordRollout, rolloutDirFinished } from "./rollout-records.ts";
import type { RolloutJob } from "./runner.ts";

/** The seed harness as candidate r00-seed: committed once, materialized again after a kill. */
async function seedCandidate(ctx: RunContext): Promise<{ commit: string; dir: string }> {
  const { repo, settings } = ctx;
  const dir = join(ctx.dir, "candidates", "r00-seed");
  let commit = repo.resolve("refs/candidates/r00-seed");
  if (!commit) {
    rmSync(dir, { recursive: true, force: true });
    const src = loadHarness(settings.seedHarness, { generatedCode: gateGeneratedCode });
    mkdirSync(dir, { recursive: true });
    for (const f of src.files) {
      mkdirSync(dirname(join(dir, f)), { recursive: true });
      copyFileSync(join(src.dir, f), join(dir, f));
    }
    commit = await repo.commitDir(dir, "r00: seed harness", undefined, 0);
    repo.createRef("refs/candidates/r00-seed", commit);
    repo.fastForwardMain(commit);
  } else if (!existsSync(join(dir, "agent.yaml"))) repo.materialize(commit, dir);
  const harness = loadHarness(dir, { generatedCode: gateGeneratedCode });
  insertCandidate(ctx.db, ctx.runId, {
    id: "r00-seed",
    round: 0,
    slot: 0,
    parentCommit: commit,
    commit,
    ref: "refs/candidates/r00-seed",
    contentHash: harness.contentHash,
    spec: null,
    changed: [],
    status: "seed",
    gateError: null,
    repaired: false,
  });
  return { commit, dir };
}

/**
 * The incumbent a run starts from: the seed program, evaluated under the repeat rule. Where the evaluator is
 * stochastic its score is the mean of the repeats, and the rollouts start from that score.
 */
function seedIncumbent(ctx: RunContext, commit: string, dir: string, evaluations: Evaluation[]): Incumbent {
  const start = evaluations[0] as Evaluation;
  const scores = validScores(evaluations);
  const stochastic = ctx.noise !== undefined && comparesRepeats(ctx.noise);
  const score = stochastic ? (scores.length ? (ctx.noise?.mean ?? undefined) : undefined) : start.valid ? start.score : undefined;
  const evaluation = stochastic && score !== undefined ? { ...start, valid: true, score } : start;
  return { commit, dir, program: ctx.task.seedProgram, evaluation, score };
}

export async function roundZero(ctx: RunContext): Promise<Incumbent> {
  const { db, runId, task, settings } = ctx;
  const { commit, dir } = await seedCandidate(ctx);
  // A broken evaluator is refused on its first evaluation, before any repeat.
  const [start] = await repeats(ctx, 0, task.seedProgram, "seed", (s) => s.length < 1);
  if (start && !start.valid && start.reason && /raised|without a result|has no "/.test(start.reason)) {
    throw new HoneError("evaluatorFailed", `the evaluator failed on the seed program ${task.seedPath}: ${start.reason}`);
  }
  const { evaluations, noise } = await measureSeedNoise(ctx, task.seedProgram);
  ctx.noise = noise;
  const seed = seedIncumbent(ctx, commit, dir, evaluations);
  ctx.seedStart = { program: seed.program, evaluation: seed.evaluation };
  startRound(db, runId, 0, "running", commit, seed.score ?? null);
  ctx.emit({ type: "round_start", round: 0, incumbentScore: seed.score ?? null });
  ctx.emit({ type: "noise", noise });
  if (roundState(db, runId, 0)?.status === "finished") return incumbentAfter(ctx, 0, seed);
  const job: RolloutJob = {
    id: "r00-seed",
    harnessDir: dir,
    startProgram: seed.program,
    startEvaluation: seed.evaluation,
    seed: seedFrom(settings.seed, 0, 0),
    maxEvals: settings.maxEvals,
    outDir: join(ctx.dir, "rollouts", "r00-seed"),
  };
  await runJobs(ctx, 0, [{ job, candidate: "r00-seed", kind: "baseline" }]);
  const decided = await ratchet(ctx, 0, seed, [{ candidate: "r00-seed", commit, dir }]);
  closeRound(ctx, 0, decided);
  const { method, params } = methodOf(ctx);
  if (method.name !== "harnessttt") keepWithMethod(ctx, 0, method, params);
  return decided.next;
}

/** The run's method and its validated parameters (harnessttt unless the settings name another). */
export function methodOf(ctx: RunContext) {
  const method = methodByName(ctx.settings.method ?? "harnessttt");
  return { method, params: methodParams(method, ctx.settings.methodParams ?? {}) };
}

interface JobSpec {
  job: RolloutJob;
  candidate: string;
  kind: "candidate" | "parent" | "baseline";
}

function record(ctx: RunContext, round: number, s: JobSpec): void {
  ctx.recording.import(readRecordsFile(s.job.outDir));
  recordRollout(
    ctx.db,
    ctx.dir,
    { runId: ctx.runId, round, candidateId: s.candidate, kind: s.kind, id: s.job.id, dir: s.job.outDir, seed: s.job.seed },
    ctx.identityBase,
  );
}

/** Runs the jobs not yet recorded; a finished rollout found on disk but not in hone.db is recorded, not re-run. */
async function runJobs(ctx: RunContext, round: number, specs: JobSpec[]): Promise<void> {
  const done = finishedRolloutIds(ctx.db, ctx.runId);
  const pending: JobSpec[] = [];
  for (const s of specs) {
    if (done.has(s.job.id)) continue;
    if (rolloutDirFinished(s.job.outDir)) record(ctx, round, s);
    else pending.push(s);
  }
  if (pending.length === 0) return;
  const byId = new Map(pending.map((p) => [p.job.id, p]));
  for await (const r of ctx.runner.run(pending.map((p) => p.job))) {
    const s = byId.get(r.id) as JobSpec;
    if (r.error || !rolloutDirFinished(s.job.outDir)) {
      const error = r.error ?? "the rollout left no result";
      ctx.emit({ type: "rollout_done", round, job: r.id, score: null, error });
      // A replay that meets an unrecorded request or evaluation cannot go on faithfully.
      if (/replay: this (request|evaluation) was never recorded/.test(error))
        throw new HoneError("runFailed", `rollout ${r.id}: ${error}`);
      // Anything else (a cancelled or timed-out cluster job, a worker error) is a failed measurement, never a score.
      insertFailedRollout(ctx.db, ctx.runId, {
        id: s.job.id,
        round,
        candidateId: s.candidate,
        kind: s.kind,
        seed: s.job.seed,
        error,
      });
      continue;
    }
    record(ctx, round, s);
    ctx.emit({ type: "rollout_done", round, job: r.id, score: r.outcome?.bestScore ?? null });
  }
}

/** Asks the proposer for K specs, gates and commits each, and records them with the proposer's calls. */
async function proposeRound(ctx: RunContext, round: number, inc: Incumbent, recorded: unknown): Promise<void> {
  const { db, runId, repo, task, settings } = ctx;
  const incHarness = loadHarness(inc.dir, { generatedCode: gateGeneratedCode });
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
  const proposal = await propose(
    forScope(ctx.proposer.model, `proposer-r${pad(round)}`),
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
    recorded as Parameters<typeof propose>[5],
  );
  insertModelCalls(
    db,
    runId,
    "proposer",
    null,
    round,
    proposal.responses.map((r) => ({
      latencyMs: r.latency_ms,
      promptTokens: r.usage.prompt_tokens,
      completionTokens: r.usage.completion_tokens,
      attempts: r.attempts,
      cached: Boolean(r.cached),
      faults: r.faults ? JSON.stringify(r.faults) : null,
    })),
  );
  // Harness versions first (in parallel), then every record in one transaction.
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
  const rows: CandidateInsert[] = proposal.slots.map((s) => {
    const id = candidateId(round, s.slot);
    const commit = commits[s.slot] ?? null;
    return {
      id,
      round,
      slot: s.slot,
      parentCommit: inc.commit,
      commit,
      ref: commit ? `refs/candidates/${id}` : null,
      contentHash: s.spec ? contentHash(join(ctx.dir, "candidates", id)) : null,
      spec: s.spec ? JSON.stringify(s.spec) : s.raw === undefined ? null : JSON.stringify(s.raw),
      changed: s.spec ? changedFields(s.spec) : [],
      status: s.spec ? (s.repaired ? "repaired" : "valid") : "invalid",
      gateError: s.problems.length ? s.problems.join("; ") : null,
      repaired: s.repaired,
    };
  });
  recordProposal(
    db,
    runId,
    round,
    {
      model: ctx.proposer.modelName,
      messages: proposal.messages,
      completion: { completion: proposal.completion, repairCompletion: proposal.repairCompletion },
    },
    rows,
  );
}

export async function runRound(ctx: RunContext, round: number, inc: Incumbent): Promise<Incumbent> {
  const { db, runId, settings } = ctx;
  const existing = roundState(db, runId, round);
  if (existing?.status === "finished") return incumbentAfter(ctx, round, inc);
  startRound(db, runId, round, "proposing", inc.commit, inc.score ?? null);
  ctx.emit({ type: "round_start", round, incumbentScore: inc.score ?? null });

  const { method, params } = methodOf(ctx);
  const ttt = method.name === "harnessttt";
  let cands = roundCandidates(db, runId, round);
  if (cands.length === 0) {
    if (ttt)
      await proposeRound(ctx, round, inc, existing?.proposer_completion ? JSON.parse(existing.proposer_completion) : undefined);
    else await proposeWithMethod(ctx, round, inc, method, params);
    cands = roundCandidates(db, runId, round);
  }
  ctx.emit({
    type: "proposals",
    round,
    valid: cands.filter((c) => c.status === "valid").length,
    repaired: cands.filter((c) => c.status === "repaired").length,
    invalid: cands.filter((c) => c.status === "invalid").length,
  });

  const runnable = cands.filter((c) => c.commit_sha);
  for (const c of runnable) ctx.candidateDir(c.id, c.commit_sha as string);
  const jobs: JobSpec[] = [];
  const start =
    method.startFrom === "seed" && ctx.seedStart
      ? { startProgram: ctx.seedStart.program, startEvaluation: ctx.seedStart.evaluation }
      : { startProgram: inc.program, startEvaluation: inc.evaluation };
  for (const c of runnable) {
    const seed = seedFrom(settings.seed, round, c.slot);
    const base = { ...start, seed, maxEvals: settings.maxEvals };
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

  const decided = await ratchet(
    ctx,
    round,
    inc,
    runnable.map((c) => ({ candidate: c.id, commit: c.commit_sha as string, dir: join(ctx.dir, "candidates", c.id) })),
  );
  const rewards = ttt ? roundRewards(ctx, round, inc, cands, decided.decisions) : { values: [], write: () => {} };
  closeRound(ctx, round, decided, rewards.write);
  if (!ttt) keepWithMethod(ctx, round, method, params);
  ctx.emit({
    type: "round_end",
    round,
    incumbentScore: decided.next.score ?? null,
    bestScore: bestScoreOf(db, runId, round),
    moved: decided.next !== inc,
    rewards: rewards.values,
  });

  if (ttt && settings.learning.mode === "lora" && settings.learning.lora) {
    const adapter = await loraStep(ctx.db, ctx.runId, round, ctx.dir, settings.learning.lora, settings.proposer);
    if (adapter) ctx.proposer = await ctx.recording.model({ ...settings.proposer, model: adapter });
  }
  return decided.next;
}
