// The rounds of an optimize run: round zero, a round of proposals, the ratchet, and resuming finished rounds.
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
import { advantages, gapReward, REWARD_MIN } from "../method/reward.ts";
import { seedFrom } from "../model/offline/rng.ts";
import { type ModelSettings, resolveModel } from "../model/resolve.ts";
import { checkHarness, gateGeneratedCode } from "../sandbox/check.ts";
import { now } from "../store/db.ts";
import { isBetter } from "../task/evaluation.ts";
import { candidateId, type Incumbent, type RunContext } from "./optimize-context.ts";
import { finishedRolloutIds, recordRollout, rolloutDirFinished, roundRollouts } from "./rollout-records.ts";
import type { RolloutJob } from "./runner.ts";
import { assertEvaluatorWorks } from "./seed-check.ts";

export async function roundZero(ctx: RunContext): Promise<Incumbent> {
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
  assertEvaluatorWorks(task, start);
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

export async function runRound(ctx: RunContext, round: number, inc: Incumbent): Promise<Incumbent> {
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
