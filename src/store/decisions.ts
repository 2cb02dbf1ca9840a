import { type Db, hasTable } from "./db.ts";

/**
 * One keep-or-drop decision on a candidate, with the rule that made it: `promote` (it became the incumbent),
 * `reject` (measured, and did not clear the rule), `unmeasurable` (its measurement or control failed: never scored
 * against a fallback). `score` is the candidate's score under the rule (a rollout's best, or a mean of repeats).
 */
export interface DecisionRow {
  candidate_id: string;
  decision: "promote" | "reject" | "unmeasurable";
  rule: string;
  reason: string;
  score: number | null;
  detail: Record<string, unknown> | null;
}

export function insertDecisions(db: Db, runId: string, round: number, rows: DecisionRow[]): void {
  const insert = db.prepare(
    "INSERT OR REPLACE INTO decisions (run_id, round, candidate_id, decision, rule, reason, score, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  for (const r of rows)
    insert.run(
      runId,
      round,
      r.candidate_id,
      r.decision,
      r.rule,
      r.reason.slice(0, 2000),
      r.score,
      r.detail ? JSON.stringify(r.detail) : null,
    );
}

export function roundDecisions(db: Db, runId: string, round: number): DecisionRow[] {
  if (!hasTable(db, "decisions")) return [];
  return (
    db
      .prepare(
        "SELECT candidate_id, decision, rule, reason, score, detail FROM decisions WHERE run_id = ? AND round = ? ORDER BY candidate_id",
      )
      .all(runId, round) as (Omit<DecisionRow, "detail"> & { detail: string | null })[]
  ).map((r) => ({ ...r, detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null }));
}

/** Every decision of a run by candidate id (for logs and pages). */
export function allDecisions(db: Db): Map<string, DecisionRow & { round: number }> {
  if (!hasTable(db, "decisions")) return new Map();
  const rows = db
    .prepare("SELECT round, candidate_id, decision, rule, reason, score, detail FROM decisions ORDER BY round, candidate_id")
    .all() as (Omit<DecisionRow, "detail"> & { round: number; detail: string | null })[];
  return new Map(rows.map((r) => [r.candidate_id, { ...r, detail: r.detail ? JSON.parse(r.detail) : null }]));
}
