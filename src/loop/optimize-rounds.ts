// The rounds of an optimize run: round zero (the seed, its noise, its rollout), a round of proposals, and resuming.
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { HoneError } from "../errors.ts";
import { loadHarness } from "../harness/package.ts";
import { isHarnessFolder } from "../harness/program.ts";
import { loadedMethod, methodParams } from "../method/catalog.ts";
import { loraStep } from "../method/lora.ts";
import { seedFrom } from "../model/offline/rng.ts";
import { gateGeneratedCode } from "../sandbox/check.ts";
import { bestScoreOf, type CandidateRow, insertCandidate, roundCandidates, roundState, startRound } from "../store/candidates.ts";
import { insertFailedRollout } from "../store/rollouts.ts";
import type { Evaluation } from "../task/evaluation.ts";
import type { Incumbent, RunContext, SearchContext } from "./optimize-context.ts";
import { keepByRatchet, keepWithMethod, proposeWithMethod } from "./optimize-method.ts";
import { comparesRepeats, measureSeedNoise, repeats, validScores } from "./optimize-noise.ts";
import { failRound, proposeRoundTtt, roundGate, type TttParams } from "./optimize-proposals.ts";
import { closeRound, incumbentAfter, ratchet } from "./optimize-ratchet.ts";
import { roundRewards } from "./optimize-rewards.ts";
import { isReplayFault, readRecordsFile } from "./recording.ts";
import { finishedRolloutIds, recordRollout, rolloutDirFinished } from "./rollout-records.ts";
import type { RolloutJob } from "./runner.ts";
import { assertEvaluatorWorks } from "./seed-check.ts";

/** Where a run keeps its seed harness (candidate r00-seed), which a replay and a resume start from. */
export const keptSeedDir = (runDir: string): string => join(runDir, "candidates", "r00-seed");

/** The seed harness as candidate r00-seed: committed once, materialized again after a kill. */
export async function seedCandidate(ctx: SearchContext): Promise<{ commit: string; dir: string }> {
  const { repo, settings } = ctx;
  const dir = keptSeedDir(ctx.dir);
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
  } else if (!isHarnessFolder(dir)) repo.materialize(commit, dir);
  repo.fastForwardMain(commit); // each time: a kill may have come between the seed's ref and main (no move once set)
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
  if (start) assertEvaluatorWorks(task, start);
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
  closeRound(ctx, 0, decided, () => keepRound(ctx, 0));
  return decided.next;
}

/**
 * The method's keep decisions on a round's candidates, written with the round's decisions (closeRound's transaction):
 * a kill can never leave a finished round whose candidates the method has not decided.
 */
function keepRound(ctx: SearchContext, round: number): void {
  const { method, params } = methodOf(ctx);
  if (method.name === "harnessttt") keepByRatchet(ctx, method.name, round);
  else keepWithMethod(ctx, round, method, params);
}

/** The run's method (imported as it started: loadMethod) and its validated parameters (harnessttt unless named). */
export function methodOf(ctx: SearchContext) {
  const method = loadedMethod(ctx.settings.method ?? "harnessttt");
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
    ctx.identityOf(s.job.id),
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
      if (isReplayFault(error)) throw new HoneError("runFailed", `rollout ${r.id}: ${error}`);
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

/** Says how a round's proposals came out (valid, repaired, refused). */
export function emitProposals(ctx: SearchContext, round: number, cands: CandidateRow[]): void {
  const n = (status: string) => cands.filter((c) => c.status === status).length;
  ctx.emit({ type: "proposals", round, valid: n("valid"), repaired: n("repaired"), invalid: n("invalid") });
}

export async function runRound(ctx: RunContext, round: number, inc: Incumbent): Promise<Incumbent> {
  const { db, runId, settings } = ctx;
  const existing = roundState(db, runId, round);
  if (existing?.status === "finished" || existing?.status === "failed") return incumbentAfter(ctx, round, inc);
  startRound(db, runId, round, "proposing", inc.commit, inc.score ?? null);
  ctx.emit({ type: "round_start", round, incumbentScore: inc.score ?? null });

  const { method, params } = methodOf(ctx);
  const ttt = method.name === "harnessttt";
  const tttParams = params as TttParams;
  let cands = roundCandidates(db, runId, round);
  if (cands.length === 0) {
    if (ttt)
      await proposeRoundTtt(
        ctx,
        round,
        { commit: inc.commit, dir: inc.dir, score: inc.score, work: { program: inc.program } },
        tttParams,
      );
    else await proposeWithMethod(ctx, round, inc, method, params);
    cands = roundCandidates(db, runId, round);
  }
  emitProposals(ctx, round, cands);
  if (ttt) {
    const gate = roundGate(cands, settings.proposals, tttParams);
    if (!gate.passed) {
      failRound(ctx, round, cands, gate, () => keepByRatchet(ctx, method.name, round));
      ctx.emit({ type: "round_end", round, incumbentScore: inc.score ?? null, bestScore: null, moved: false, rewards: [] });
      return inc;
    }
  }

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
  closeRound(ctx, round, decided, () => {
    rewards.write();
    keepRound(ctx, round);
  });
  ctx.emit({
    type: "round_end",
    round,
    incumbentScore: decided.next.score ?? null,
    bestScore: bestScoreOf(db, runId, round),
    moved: decided.next !== inc,
    rewards: rewards.values,
  });

  if (ttt && settings.learning.mode === "lora" && settings.learning.lora) {
    // Only `hone replay` (a recorded run it reproduces) skips training; a new run with --cache replay trains.
    const replay = Boolean(settings.replayOf);
    const adapter = await loraStep(ctx.db, ctx.runId, round, ctx.dir, settings.learning.lora, settings.proposer, replay);
    if (adapter) ctx.proposer = await ctx.recording.model({ ...settings.proposer, model: adapter });
  }
  return decided.next;
}
