import { type Db, hasTable } from "./db.ts";

/** The queries a receipt rests on, for every run kind. */

export interface CallRow {
  latency_ms: number;
  prompt_tokens: number;
  completion_tokens: number;
  attempts: number;
  cached: number;
  faults: string | null;
}

export function callsOfRole(db: Db, role: string): CallRow[] {
  return db
    .prepare("SELECT latency_ms, prompt_tokens, completion_tokens, attempts, cached, faults FROM model_calls WHERE role = ?")
    .all(role) as CallRow[];
}

/** A model call's role, where it was made (a rollout or QA job, a round) and its tokens, in the order recorded. */
export interface CallTokensRow {
  role: string;
  rollout_id: string | null;
  round: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

export function callTokens(db: Db): CallTokensRow[] {
  if (!hasTable(db, "model_calls")) return [];
  return db
    .prepare("SELECT role, rollout_id, round, prompt_tokens, completion_tokens FROM model_calls ORDER BY id")
    .all() as CallTokensRow[];
}

export interface RolloutSummaryRow {
  id: string;
  status: string;
  stop_reason: string | null;
  error: string | null;
  evals_used: number;
  evals_invalid: number;
  seconds: number;
  start_score: number | null;
  best_score: number | null;
  identity: string | null;
  identity_digest: string | null;
}

export function rolloutSummaries(db: Db): RolloutSummaryRow[] {
  return db
    .prepare(
      "SELECT id, status, stop_reason, error, evals_used, evals_invalid, seconds, start_score, best_score, identity, identity_digest FROM rollouts ORDER BY id",
    )
    .all() as RolloutSummaryRow[];
}

export function candidateStatuses(
  db: Db,
): { id: string; status: string; content_hash: string | null; commit_sha: string | null; gate_error: string | null }[] {
  return db.prepare("SELECT id, status, content_hash, commit_sha, gate_error FROM candidates ORDER BY id").all() as {
    id: string;
    status: string;
    content_hash: string | null;
    commit_sha: string | null;
    gate_error: string | null;
  }[];
}

export interface QACounts {
  measurements: number;
  pending: number;
  task_results: number;
  failed: { measurement_id: string; task_id: string; error: string | null }[];
}

/** QA measurements: how many, how many task results, and every task that failed for infrastructure reasons. */
export function qaCounts(db: Db): QACounts {
  if (!hasTable(db, "measurements")) return { measurements: 0, pending: 0, task_results: 0, failed: [] };
  const m = db.prepare("SELECT COUNT(*) AS n, COALESCE(SUM(status = 'pending'), 0) AS pending FROM measurements").get() as {
    n: number;
    pending: number;
  };
  const t = db.prepare("SELECT COUNT(*) AS n FROM task_results").get() as { n: number };
  const failed = db
    .prepare("SELECT measurement_id, task_id, error FROM task_results WHERE status = 'infra' ORDER BY measurement_id, idx")
    .all() as QACounts["failed"];
  return { measurements: m.n, pending: m.pending, task_results: t.n, failed };
}

/**
 * The hone version whose rules a run's records follow: written at its start (`meta`); for a run started before hone
 * wrote it there, the first rollout identity's (discovery runs), else its finished summary's (QA runs); null where
 * none is recorded.
 */
export function recordedHoneVersion(db: Db): string | null {
  const meta = hasTable(db, "meta")
    ? (db.prepare("SELECT value FROM meta WHERE key = 'hone'").get() as { value: string } | undefined)
    : undefined;
  if (meta) return meta.value;
  const read = (text: string | null | undefined, key: string): string | null => {
    try {
      const v = text ? (JSON.parse(text) as Record<string, unknown>)[key] : undefined;
      return typeof v === "string" ? v : null;
    } catch {
      return null;
    }
  };
  if (hasTable(db, "rollouts")) {
    const row = db.prepare("SELECT identity FROM rollouts WHERE identity IS NOT NULL ORDER BY id LIMIT 1").get() as
      | { identity: string }
      | undefined;
    const v = read(row?.identity, "hone");
    if (v) return v;
  }
  const run = db.prepare("SELECT summary FROM runs WHERE id = 'run'").get() as { summary: string | null } | undefined;
  return read(run?.summary, "hone");
}
