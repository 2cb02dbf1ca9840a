import { type Db, now } from "./db.ts";

/** Rounds (optimize) and epochs (train) and their candidates: the queries the loops share. */

export interface RoundState {
  status: string;
  proposer_completion: string | null;
  proposer_prompt: string | null;
  moved: number;
}

export function roundState(db: Db, runId: string, round: number): RoundState | undefined {
  return db
    .prepare("SELECT status, proposer_completion, proposer_prompt, moved FROM rounds WHERE run_id = ? AND round = ?")
    .get(runId, round) as RoundState | undefined;
}

/** Starts a round (or an epoch) unless it exists: the incumbent it starts from, and its score. */
export function startRound(db: Db, runId: string, round: number, status: string, commit: string, score: number | null): void {
  db.prepare(
    "INSERT OR IGNORE INTO rounds (run_id, round, status, incumbent_commit, incumbent_score, started_at) VALUES (?, ?, ?, ?, ?, ?)",
  ).run(runId, round, status, commit, score, now());
}

export function setRoundStatus(db: Db, runId: string, round: number, status: string): void {
  db.prepare("UPDATE rounds SET status = ? WHERE run_id = ? AND round = ?").run(status, runId, round);
}

/**
 * Closes a round: the best score it reached (the promoted candidate's, or null) and whether the incumbent moved;
 * `failed` when the proposal gate refused the round (nothing was measured, the incumbent stays).
 */
export function finishRound(
  db: Db,
  runId: string,
  round: number,
  bestScore: number | null,
  moved: boolean,
  status: "finished" | "failed" = "finished",
): void {
  db.prepare("UPDATE rounds SET status = ?, best_score = ?, moved = ?, finished_at = ? WHERE run_id = ? AND round = ?").run(
    status,
    bestScore,
    moved ? 1 : 0,
    now(),
    runId,
    round,
  );
}

export function bestScoreOf(db: Db, runId: string, round: number): number | null {
  return (
    db.prepare("SELECT best_score FROM rounds WHERE run_id = ? AND round = ?").get(runId, round) as { best_score: number | null }
  ).best_score;
}

export function lastFinishedRound(db: Db): number {
  return (db.prepare("SELECT MAX(round) AS r FROM rounds WHERE status = 'finished'").get() as { r: number | null }).r ?? 0;
}

/** The last round a run has closed, finished or failed (0: none). */
export function lastClosedRound(db: Db): number {
  const sql = "SELECT MAX(round) AS r FROM rounds WHERE status IN ('finished', 'failed')";
  return (db.prepare(sql).get() as { r: number | null }).r ?? 0;
}

export interface CandidateInsert {
  id: string;
  round: number;
  slot: number;
  parentCommit: string;
  commit: string | null;
  ref: string | null;
  contentHash: string | null;
  spec: string | null;
  changed: string[];
  status: string;
  gateError: string | null;
  repaired: boolean;
}

export function insertCandidate(db: Db, runId: string, c: CandidateInsert, mode: "IGNORE" | "REPLACE" = "IGNORE"): void {
  db.prepare(
    `INSERT OR ${mode} INTO candidates (id, run_id, round, slot, parent_commit, commit_sha, ref, content_hash, spec, changed, status, gate_error, repaired) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    c.id,
    runId,
    c.round,
    c.slot,
    c.parentCommit,
    c.commit,
    c.ref,
    c.contentHash,
    c.spec,
    JSON.stringify(c.changed),
    c.status,
    c.gateError?.slice(0, 4000) ?? null,
    c.repaired ? 1 : 0,
  );
}

export interface CandidateRow {
  id: string;
  slot: number;
  status: string;
  commit_sha: string | null;
  spec: string | null;
  gate_error: string | null;
}

export function roundCandidates(db: Db, runId: string, round: number): CandidateRow[] {
  return db
    .prepare("SELECT id, slot, status, commit_sha, spec, gate_error FROM candidates WHERE run_id = ? AND round = ? ORDER BY slot")
    .all(runId, round) as CandidateRow[];
}

export function commitOfCandidate(db: Db, id: string): string | null {
  return (
    (db.prepare("SELECT commit_sha FROM candidates WHERE id = ?").get(id) as { commit_sha: string | null } | undefined)
      ?.commit_sha ?? null
  );
}

/** The content hash of the harness version at a commit (its first candidate's). */
export function contentHashOfCommit(db: Db, commit: string): string | null {
  return (
    (
      db.prepare("SELECT content_hash FROM candidates WHERE commit_sha = ? ORDER BY round LIMIT 1").get(commit) as
        | { content_hash: string | null }
        | undefined
    )?.content_hash ?? null
  );
}

/** The candidate that introduced a commit: the best harness's meta. */
export function candidateOfCommit(
  db: Db,
  commit: string,
): { id: string; round: number; parent_commit: string; spec: string | null; changed: string } | undefined {
  return db
    .prepare("SELECT id, round, parent_commit, spec, changed FROM candidates WHERE commit_sha = ? ORDER BY round LIMIT 1")
    .get(commit) as { id: string; round: number; parent_commit: string; spec: string | null; changed: string } | undefined;
}

export function recordProposal(
  db: Db,
  runId: string,
  round: number,
  p: { model: string; messages: unknown; completion: unknown },
  candidates: CandidateInsert[],
): void {
  db.transaction(() => {
    db.prepare(
      "UPDATE rounds SET proposer_model = ?, proposer_prompt = ?, proposer_completion = ?, status = 'rolling_out' WHERE run_id = ? AND round = ?",
    ).run(p.model, JSON.stringify(p.messages), JSON.stringify(p.completion), runId, round);
    for (const c of candidates) insertCandidate(db, runId, c, "IGNORE");
  })();
}

/** Rewards, advantages and scores of a round's slots (null where a slot was unmeasurable). */
export function setRewards(
  db: Db,
  rows: { id: string; reward: number | null; advantage: number | null; score: number | null }[],
): void {
  const update = db.prepare("UPDATE candidates SET reward = ?, advantage = ?, score = ? WHERE id = ?");
  db.transaction(() => {
    for (const r of rows) update.run(r.reward, r.advantage, r.score, r.id);
  })();
}

export interface SlotSummary {
  slot: number;
  status: string;
  score: number | null;
  reward: number | null;
  advantage: number | null;
  changed: string | null;
}

export function slotSummaries(db: Db, runId: string, round: number): SlotSummary[] {
  return db
    .prepare(
      "SELECT slot, status, score, reward, advantage, changed FROM candidates WHERE run_id = ? AND round = ? ORDER BY slot",
    )
    .all(runId, round) as SlotSummary[];
}

export interface LogRound {
  round: number;
  status: string;
  incumbent_commit: string;
  incumbent_score: number | null;
  best_score: number | null;
  moved: number;
}

export function allRounds(db: Db): LogRound[] {
  return db
    .prepare("SELECT round, status, incumbent_commit, incumbent_score, best_score, moved FROM rounds ORDER BY round")
    .all() as LogRound[];
}

export interface FullCandidateRow {
  id: string;
  round: number;
  slot: number;
  status: string;
  commit_sha: string | null;
  parent_commit: string;
  content_hash: string | null;
  score: number | null;
  reward: number | null;
  advantage: number | null;
  changed: string | null;
  gate_error: string | null;
  spec: string | null;
}

export function allCandidates(db: Db): FullCandidateRow[] {
  return db
    .prepare(
      "SELECT id, round, slot, status, commit_sha, parent_commit, content_hash, score, reward, advantage, changed, gate_error, spec FROM candidates ORDER BY round, slot",
    )
    .all() as FullCandidateRow[];
}

export function candidateCommits(db: Db, id: string): { commit_sha: string | null; parent_commit: string } | undefined {
  return db.prepare("SELECT commit_sha, parent_commit FROM candidates WHERE id = ?").get(id) as
    | { commit_sha: string | null; parent_commit: string }
    | undefined;
}
