import { type Db, hasTable, now } from "./db.ts";

/**
 * QA measurements (hone eval, hone train): one harness version measured on a panel of tasks, task by task.
 * A measurement is `pending` until every task has a result, then `finished` with its aggregates.
 */
export interface MeasurementStart {
  id: string;
  round: number;
  candidateId: string;
  commit: string | null;
  contentHash: string;
  benchmark: string;
  split: string | null;
  tasks: number;
}

export function startMeasurement(db: Db, runId: string, m: MeasurementStart): void {
  db.prepare(
    "INSERT OR IGNORE INTO measurements (id, run_id, round, candidate_id, commit_sha, content_hash, benchmark, split, status, tasks, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
  ).run(m.id, runId, m.round, m.candidateId, m.commit, m.contentHash, m.benchmark, m.split, m.tasks, now());
}

export type TaskStatus = "solved" | "unsolved" | "infra";

export interface TaskResultRow {
  task_id: string;
  idx: number;
  job_id: string;
  seed: number;
  status: TaskStatus;
  score: number;
  steps: number;
  tokens: number;
  error: string | null;
  extracted: string | null;
  answer: string | null;
  detail: string | null;
  trajectory: string | null;
}

export function insertTaskResult(db: Db, measurementId: string, r: TaskResultRow): void {
  db.prepare(
    `INSERT OR REPLACE INTO task_results (measurement_id, task_id, idx, job_id, seed, status, score, steps, tokens, error, extracted, answer, detail,
      trajectory, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    measurementId,
    r.task_id,
    r.idx,
    r.job_id,
    r.seed,
    r.status,
    r.score,
    r.steps,
    r.tokens,
    r.error?.slice(0, 2000) ?? null,
    r.extracted?.slice(0, 2000) ?? null,
    r.answer?.slice(0, 4000) ?? null,
    r.detail,
    r.trajectory,
    now(),
  );
}

export function taskResults(db: Db, measurementId: string): TaskResultRow[] {
  if (!hasTable(db, "task_results")) return [];
  return db
    .prepare(
      "SELECT task_id, idx, job_id, seed, status, score, steps, tokens, error, extracted, answer, detail, trajectory FROM task_results WHERE measurement_id = ? ORDER BY idx",
    )
    .all(measurementId) as TaskResultRow[];
}

/** Closes a measurement with its aggregates: solved and infra counts, mean score over the measured tasks. */
export function finishMeasurement(db: Db, id: string): void {
  db.prepare(
    `UPDATE measurements SET status = 'finished', finished_at = ?,
       solved = (SELECT COUNT(*) FROM task_results WHERE measurement_id = ? AND status = 'solved'),
       infra = (SELECT COUNT(*) FROM task_results WHERE measurement_id = ? AND status = 'infra'),
       mean_score = (SELECT AVG(score) FROM task_results WHERE measurement_id = ? AND status <> 'infra')
     WHERE id = ?`,
  ).run(now(), id, id, id, id);
}

export interface MeasurementRow {
  id: string;
  round: number;
  candidate_id: string;
  commit_sha: string | null;
  content_hash: string;
  benchmark: string;
  split: string | null;
  status: string;
  tasks: number;
  solved: number | null;
  infra: number | null;
  mean_score: number | null;
}

export function measurement(db: Db, id: string): MeasurementRow | undefined {
  if (!hasTable(db, "measurements")) return undefined;
  return db
    .prepare(
      "SELECT id, round, candidate_id, commit_sha, content_hash, benchmark, split, status, tasks, solved, infra, mean_score FROM measurements WHERE id = ?",
    )
    .get(id) as MeasurementRow | undefined;
}

export function measurements(db: Db): MeasurementRow[] {
  if (!hasTable(db, "measurements")) return [];
  return db
    .prepare(
      "SELECT id, round, candidate_id, commit_sha, content_hash, benchmark, split, status, tasks, solved, infra, mean_score FROM measurements ORDER BY round, id",
    )
    .all() as MeasurementRow[];
}

/** The per-task solved matrix of a run: every measurement's status per task (for a train run's page). */
export function solvedMatrix(db: Db): { measurement_id: string; task_id: string; status: TaskStatus; score: number }[] {
  if (!hasTable(db, "task_results")) return [];
  return db.prepare("SELECT measurement_id, task_id, status, score FROM task_results ORDER BY measurement_id, idx").all() as {
    measurement_id: string;
    task_id: string;
    status: TaskStatus;
    score: number;
  }[];
}
