import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../store/db.ts";
import { now } from "../store/db.ts";
import { type IdentityParts, identityDigest } from "./identity.ts";

export interface RolloutRow {
  id: string;
  candidate_id: string;
  kind: string;
  seed: number;
  status: string;
  best_score: number | null;
  /** Best valid score over the rollout's own evaluations (not counting its starting program), per direction. */
  own_max: number | null;
  own_min: number | null;
  best_program: string | null;
  evals_used: number;
}

/**
 * Reads a finished rollout's directory (result.json, trajectory.jsonl, best program) into hone.db in one
 * transaction: the rollout, its evaluations and its model calls. A rollout is finished exactly when its row exists.
 */
export function recordRollout(
  db: Db,
  runId: string,
  round: number,
  candidateId: string,
  kind: "candidate" | "parent" | "baseline",
  id: string,
  dir: string,
  seed: number,
  identityBase?: Omit<IdentityParts, "sampling" | "harness">,
): void {
  const result = JSON.parse(readFileSync(join(dir, "result.json"), "utf8"));
  const events = readFileSync(join(dir, "trajectory.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const programFile = readdirSync(dir).find((f) => f.startsWith("best_program"));
  const bestProgram = programFile ? readFileSync(join(dir, programFile), "utf8") : null;
  const evaluations = events.filter((e) => e.type === "evaluation");
  const start = events.find((e) => e.type === "rollout_start") as
    | { harness?: { content_hash: string }; sampling?: Record<string, unknown> }
    | undefined;
  const identity = identityBase
    ? { ...identityBase, sampling: start?.sampling ?? {}, harness: start?.harness?.content_hash ?? "" }
    : undefined;
  const insert = db.transaction(() => {
    db.prepare(
      `INSERT OR REPLACE INTO rollouts (id, run_id, round, candidate_id, kind, seed, status, stop_reason, error, start_score, best_score, improved,
        evals_used, evals_invalid, prompt_tokens, completion_tokens, model_calls, seconds, dir, best_program, finished_at, identity, identity_digest)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id,
      runId,
      round,
      candidateId,
      kind,
      seed,
      result.status,
      result.stopReason ?? null,
      result.error ?? null,
      result.startScore ?? null,
      result.bestScore ?? null,
      result.improved ? 1 : 0,
      result.evaluations?.used ?? 0,
      result.evaluations?.invalid ?? 0,
      result.usage?.prompt_tokens ?? 0,
      result.usage?.completion_tokens ?? 0,
      result.usage?.model_calls ?? 0,
      result.usage?.seconds ?? 0,
      dir,
      bestProgram,
      now(),
      identity ? JSON.stringify(identity) : null,
      identity ? identityDigest(identity) : null,
    );
    db.prepare("DELETE FROM evaluations WHERE rollout_id = ?").run(id);
    const ev = db.prepare(
      "INSERT INTO evaluations (rollout_id, idx, valid, score, reason, program_sha, seconds) VALUES (?, ?, ?, ?, ?, ?, ?)",
    );
    for (const e of evaluations)
      ev.run(
        id,
        e.index,
        e.valid ? 1 : 0,
        (e.score as number | null) ?? null,
        (e.reason as string | undefined) ?? null,
        e.program_sha256,
        e.seconds ?? null,
      );
    db.prepare("DELETE FROM model_calls WHERE rollout_id = ?").run(id);
    const mc = db.prepare(
      "INSERT INTO model_calls (run_id, role, rollout_id, round, latency_ms, prompt_tokens, completion_tokens, attempts, cached, faults) VALUES (?, 'executor', ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    for (const e of events.filter((x) => x.type === "model_call")) {
      const u = e.usage as { prompt_tokens: number; completion_tokens: number };
      mc.run(
        runId,
        id,
        round,
        e.latency_ms,
        u.prompt_tokens,
        u.completion_tokens,
        e.attempts,
        e.cached ? 1 : 0,
        e.faults ? JSON.stringify(e.faults) : null,
      );
    }
  });
  insert();
}

/** The rollout rows of a round, with each rollout's best valid score over its own evaluations. */
export function roundRollouts(db: Db, runId: string, round: number): RolloutRow[] {
  return db
    .prepare(
      `SELECT r.id, r.candidate_id, r.kind, r.seed, r.status, r.best_score, r.best_program, r.evals_used,
              (SELECT MAX(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_max,
              (SELECT MIN(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_min
       FROM rollouts r WHERE r.run_id = ? AND r.round = ?`,
    )
    .all(runId, round) as RolloutRow[];
}

export function finishedRolloutIds(db: Db, runId: string): Set<string> {
  return new Set((db.prepare("SELECT id FROM rollouts WHERE run_id = ?").all(runId) as { id: string }[]).map((r) => r.id));
}

export const rolloutDirFinished = (dir: string) => existsSync(join(dir, "result.json"));
