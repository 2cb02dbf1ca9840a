import type { Db } from "./db.ts";

/**
 * What a method keeps per candidate beyond hone's own records: its parents (a crossover or merge has two), the
 * proposer's rationale, the method's keep decision with its rule, and the method's own state (ACE's counters,
 * DGM's lineage, a population's membership), so a resumed or replayed run rebuilds the same archive.
 */
export interface MethodStateRow {
  candidate_id: string;
  method: string;
  parents: string[];
  rationale: string | null;
  kept: boolean | null;
  rule: string | null;
  reason: string | null;
  state: Record<string, unknown> | null;
}

export function insertMethodProposal(
  db: Db,
  runId: string,
  row: Pick<MethodStateRow, "candidate_id" | "method" | "parents" | "rationale" | "state">,
): void {
  db.prepare(
    "INSERT OR IGNORE INTO method_state (run_id, candidate_id, method, parents, rationale, state) VALUES (?, ?, ?, ?, ?, ?)",
  ).run(
    runId,
    row.candidate_id,
    row.method,
    JSON.stringify(row.parents),
    row.rationale,
    row.state ? JSON.stringify(row.state) : null,
  );
}

export function setMethodKeep(
  db: Db,
  runId: string,
  candidateId: string,
  method: string,
  keep: { keep: boolean; rule: string; reason: string },
): void {
  db.prepare(
    `INSERT INTO method_state (run_id, candidate_id, method, parents, kept, rule, reason) VALUES (?, ?, ?, '[]', ?, ?, ?)
     ON CONFLICT (run_id, candidate_id) DO UPDATE SET kept = excluded.kept, rule = excluded.rule, reason = excluded.reason`,
  ).run(runId, candidateId, method, keep.keep ? 1 : 0, keep.rule, keep.reason.slice(0, 2000));
}

type Raw = Omit<MethodStateRow, "parents" | "kept" | "state"> & { parents: string; kept: number | null; state: string | null };

/**
 * Every candidate's method state in a run. `state` is parsed when first read: the archive is rebuilt from these rows
 * twice a round and most methods read few candidates' state, while some keep a snapshot of their archive in each
 * (DGM's generation), so parsing them all every time would grow with the square of the candidates.
 */
export function methodStates(db: Db, runId: string): Map<string, MethodStateRow> {
  const rows = db.prepare("SELECT * FROM method_state WHERE run_id = ?").all(runId) as Raw[];
  return new Map(
    rows.map((r) => {
      let parsed: Record<string, unknown> | null | undefined;
      const row: MethodStateRow = {
        ...r,
        parents: JSON.parse(r.parents) as string[],
        kept: r.kept === null ? null : r.kept === 1,
        get state() {
          parsed ??= r.state ? (JSON.parse(r.state) as Record<string, unknown>) : null;
          return parsed;
        },
      };
      return [r.candidate_id, row];
    }),
  );
}

/** A method's keep decision for each of the given candidates that has one (the console's round table). */
export function methodDecisions(
  db: Db,
  runId: string,
  ids: string[],
): Map<string, Pick<MethodStateRow, "kept" | "rule" | "reason">> {
  if (ids.length === 0) return new Map();
  const rows = db
    .prepare(
      `SELECT candidate_id, kept, rule, reason FROM method_state WHERE run_id = ? AND candidate_id IN (${ids.map(() => "?").join(", ")})`,
    )
    .all(runId, ...ids) as { candidate_id: string; kept: number | null; rule: string | null; reason: string | null }[];
  return new Map(
    rows.map((r) => [r.candidate_id, { kept: r.kept === null ? null : r.kept === 1, rule: r.rule, reason: r.reason }]),
  );
}
