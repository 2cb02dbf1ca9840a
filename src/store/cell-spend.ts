// What a `hone compare` cell spent, round by round, read from its optimize run's hone.db (read-only queries).
import type { Db } from "./db.ts";

/** One rollout of the search, in the order a round makes them (slot, then the candidate before its control). */
export interface SpendRollout {
  round: number;
  id: string;
  kind: string;
  status: string;
  evals: number;
  tokens: number;
  seconds: number;
  own_max: number | null;
  own_min: number | null;
}

/** Per round: its proposer calls and tokens, its re-evaluations outside any rollout, its start and end. */
export interface SpendRound {
  round: number;
  status: string;
  started_at: string;
  finished_at: string | null;
  proposer_calls: number;
  proposer_tokens: number;
  noise_evaluations: number;
  noise_seconds: number;
  /** The first valid re-evaluation of the round (round 0: the seed program's score). */
  noise_first_score: number | null;
}

export function spendRollouts(db: Db, runId = "run"): SpendRollout[] {
  return db
    .prepare(
      `SELECT r.round, r.id, r.kind, r.status, COALESCE(r.evals_used, 0) AS evals,
              COALESCE(r.prompt_tokens, 0) + COALESCE(r.completion_tokens, 0) AS tokens, COALESCE(r.seconds, 0) AS seconds,
              (SELECT MAX(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_max,
              (SELECT MIN(score) FROM evaluations e WHERE e.rollout_id = r.id AND e.valid = 1) AS own_min
       FROM rollouts r LEFT JOIN candidates c ON c.id = r.candidate_id
       WHERE r.run_id = ? ORDER BY r.round, COALESCE(c.slot, 0), r.kind = 'parent', r.id`,
    )
    .all(runId) as SpendRollout[];
}

export function spendRounds(db: Db, runId = "run"): SpendRound[] {
  return db
    .prepare(
      `SELECT d.round, d.status, d.started_at, d.finished_at,
              (SELECT COUNT(*) FROM model_calls m WHERE m.run_id = d.run_id AND m.role = 'proposer' AND m.round = d.round) AS proposer_calls,
              (SELECT COALESCE(SUM(COALESCE(m.prompt_tokens, 0) + COALESCE(m.completion_tokens, 0)), 0) FROM model_calls m
                WHERE m.run_id = d.run_id AND m.role = 'proposer' AND m.round = d.round) AS proposer_tokens,
              (SELECT COUNT(*) FROM noise_evaluations n WHERE n.run_id = d.run_id AND n.round = d.round) AS noise_evaluations,
              (SELECT COALESCE(SUM(COALESCE(n.seconds, 0)), 0) FROM noise_evaluations n
                WHERE n.run_id = d.run_id AND n.round = d.round) AS noise_seconds,
              (SELECT n.score FROM noise_evaluations n WHERE n.run_id = d.run_id AND n.round = d.round AND n.valid = 1
                ORDER BY n.idx LIMIT 1) AS noise_first_score
       FROM rounds d WHERE d.run_id = ? ORDER BY d.round`,
    )
    .all(runId) as SpendRound[];
}
