// What a `hone compare` QA cell spent, measurement by measurement, read from its optimize run's hone.db (read-only).
import { type Db, hasTable } from "./db.ts";

/** One QA measurement of the search (a candidate on the train slice, or the final choice on validation). */
export interface SpendMeasurement {
  id: string;
  round: number;
  split: string | null;
  /** Questions answered (each one evaluator call). */
  questions: number;
  tokens: number;
  /** The mean score over the questions without an infrastructure failure; null when every one failed. */
  mean: number | null;
  started_at: string;
  finished_at: string | null;
}

/** Every measurement of the run, in the order made (round, then start). */
export function spendMeasurements(db: Db, runId = "run"): SpendMeasurement[] {
  if (!hasTable(db, "measurements")) return [];
  return db
    .prepare(
      `SELECT m.id, m.round, m.split, m.started_at, m.finished_at,
              (SELECT COUNT(*) FROM task_results t WHERE t.measurement_id = m.id) AS questions,
              (SELECT COALESCE(SUM(t.tokens), 0) FROM task_results t WHERE t.measurement_id = m.id) AS tokens,
              (SELECT AVG(t.score) FROM task_results t WHERE t.measurement_id = m.id AND t.status <> 'infra') AS mean
       FROM measurements m WHERE m.run_id = ? ORDER BY m.round, m.rowid`,
    )
    .all(runId) as SpendMeasurement[];
}
