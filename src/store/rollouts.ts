import { type Db, now } from "./db.ts";

export interface RolloutRow {
  id: string;
  candidate_id: string;
  kind: string;
  seed: number;
  status: string;
  error: string | null;
  best_score: number | null;
  /** Best valid score over the rollout's own evaluations (not counting its starting program), per direction. */
  own_max: number | null;
  own_min: number | null;
  best_program: string | null;
  evals_used: number;
  identity: string | null;
}

export interface RolloutRecord {
  id: string;
  round: number;
  candidateId: string;
  kind: "candidate" | "parent" | "baseline";
  seed: number;
  status: string;
  stopReason: string | null;
  error: string | null;
  startScore: number | null;
  bestScore: number | null;
  improved: boolean;
  evalsUsed: number;
  evalsInvalid: number;
  promptTokens: number;
  completionTokens: number;
  modelCalls: number;
  seconds: number;
  /** The rollout's folder, relative to the run directory ("." when the run directory is the rollout's). */
  dir: string;
  bestProgram: string | null;
  identity: string | null;
  identityDigest: string | null;
}

export interface EvaluationRecordRow {
  index: number;
  valid: boolean;
  score: number | null;
  reason: string | null;
  programSha: string;
  seconds: number | null;
}

export interface ModelCallRow {
  latencyMs: number;
  promptTokens: number;
  completionTokens: number;
  attempts: number;
  cached: boolean;
  faults: string | null;
}

/** A finished rollout, its evaluations and its model calls, in one transaction (a rollout is finished exactly when its row exists). */
export function insertRollout(
  db: Db,
  runId: string,
  r: RolloutRecord,
  evaluations: EvaluationRecordRow[],
  calls: ModelCallRow[],
): void {
  db.transaction(() => {
    db.prepare(
      `INSERT OR REPLACE INTO rollouts (id, run_id, round, candidate_id, kind, seed, status, stop_reason, error, start_score, best_score, improved,
        evals_used, evals_invalid, prompt_tokens, completion_tokens, model_calls, seconds, dir, best_program, finished_at, identity, identity_digest)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      r.id,
      runId,
      r.round,
      r.candidateId,
      r.kind,
      r.seed,
      r.status,
      r.stopReason,
      r.error,
      r.startScore,
      r.bestScore,
      r.improved ? 1 : 0,
      r.evalsUsed,
      r.evalsInvalid,
      r.promptTokens,
      r.completionTokens,
      r.modelCalls,
      r.seconds,
      r.dir,
      r.bestProgram,
      now(),
      r.identity,
      r.identityDigest,
    );
    db.prepare("DELETE FROM evaluations WHERE rollout_id = ?").run(r.id);
    const ev = db.prepare(
      "INSERT INTO evaluations (rollout_id, idx, valid, score, reason, program_sha, seconds) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    for (const e of evaluations) ev.run(r.id, e.index, e.valid ? 1 : 0, e.score, e.reason, e.programSha, e.seconds);
    insertModelCalls(db, runId, "executor", r.id, r.round, calls);
  })();
}

/**
 * Model calls of one rollout or QA job, or of a proposer round (rolloutId null), replacing what a killed attempt left
 * (a round that proposed nothing is proposed again on resume, its calls recorded again).
 */
export function insertModelCalls(
  db: Db,
  runId: string,
  role: "executor" | "proposer",
  rolloutId: string | null,
  round: number | null,
  calls: ModelCallRow[],
): void {
  if (rolloutId !== null) db.prepare("DELETE FROM model_calls WHERE rollout_id = ?").run(rolloutId);
  else
    db.prepare("DELETE FROM model_calls WHERE run_id = ? AND role = ? AND rollout_id IS NULL AND round IS ?").run(
      runId,
      role,
      round,
    );
  const mc = db.prepare(
    "INSERT INTO model_calls (run_id, role, rollout_id, round, latency_ms, prompt_tokens, completion_tokens, attempts, cached, faults) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  for (const c of calls)
    mc.run(
      runId,
      role,
      rolloutId,
      round,
      c.latencyMs,
      c.promptTokens,
      c.completionTokens,
      c.attempts,
      c.cached ? 1 : 0,
      c.faults,
    );
}

/** A rollout that failed as a measurement (a cancelled cluster job, a worker error): recorded, never scored. */
export function insertFailedRollout(
  db: Db,
  runId: string,
  r: { id: string; round: number; candidateId: string; kind: string; seed: number; error: string },
): void {
  db.prepare(
    "INSERT OR REPLACE INTO rollouts (id, run_id, round, candidate_id, kind, seed, status, error, evals_used, evals_invalid, finished_at) VALUES (?, ?, ?, ?, ?, ?, 'failed', ?, 0, 0, ?)",
  ).run(r.id, runId, r.round, r.candidateId, r.kind, r.seed, r.error.slice(0, 2000), now());
}

/** The rollout rows of a round, with each rollout's best valid score over its own evaluations. */
export function roundRollouts(db: Db, runId: string, round: number): RolloutRow[] {
  return db
    .prepare(
      `SELECT r.id, r.candidate_id, r.kind, r.seed, r.status, r.error, r.best_score, r.best_program, r.evals_used, r.identity,
              (SELECT MAX(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_max,
              (SELECT MIN(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_min
       FROM rollouts r WHERE r.run_id = ? AND r.round = ?`,
    )
    .all(runId, round) as RolloutRow[];
}

export function finishedRolloutIds(db: Db, runId: string): Set<string> {
  return new Set((db.prepare("SELECT id FROM rollouts WHERE run_id = ?").all(runId) as { id: string }[]).map((r) => r.id));
}

/** Every candidate's own rollout (not paired controls) with its own best scores, for a method's archive. */
export function candidateRollouts(
  db: Db,
  runId: string,
): Map<string, RolloutRow & { round: number; dir: string | null; tokens: number; seconds: number }> {
  const rows = db
    .prepare(
      `SELECT r.id, r.round, r.candidate_id, r.kind, r.seed, r.status, r.error, r.best_score, r.best_program, r.evals_used, r.identity, r.dir,
              COALESCE(r.prompt_tokens, 0) + COALESCE(r.completion_tokens, 0) AS tokens, COALESCE(r.seconds, 0) AS seconds,
              (SELECT MAX(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_max,
              (SELECT MIN(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_min
       FROM rollouts r WHERE r.run_id = ? AND r.kind != 'parent'`,
    )
    .all(runId) as (RolloutRow & { round: number; dir: string | null; tokens: number; seconds: number })[];
  return new Map(rows.map((r) => [r.candidate_id, r]));
}

/**
 * The reasons of each rollout's invalid evaluations in a run, the latest `limit` of each first (a reflective
 * method's evidence): one query for the whole run, as a method's archive is rebuilt every round.
 */
export function invalidReasonsByRollout(db: Db, runId: string, limit: number): Map<string, string[]> {
  const rows = db
    .prepare(
      `SELECT rollout_id, reason FROM (
         SELECT e.rollout_id, e.reason, ROW_NUMBER() OVER (PARTITION BY e.rollout_id ORDER BY e.idx DESC) AS n
         FROM evaluations e JOIN rollouts r ON r.id = e.rollout_id
         WHERE r.run_id = ? AND e.valid = 0 AND e.reason IS NOT NULL)
       WHERE n <= ? ORDER BY rollout_id, n`,
    )
    .all(runId, limit) as { rollout_id: string; reason: string }[];
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.rollout_id);
    if (list) list.push(r.reason);
    else out.set(r.rollout_id, [r.reason]);
  }
  return out;
}
