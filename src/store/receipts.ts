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
