import { type Db, hasTable } from "../store/db.ts";

const QUERIES: Record<string, string> = {
  rounds: "SELECT round, incumbent_commit, incumbent_score, best_score, moved FROM rounds ORDER BY round",
  candidates:
    "SELECT id, status, commit_sha, content_hash, spec, score, reward, advantage, gate_error FROM candidates ORDER BY id",
  rollouts:
    "SELECT id, candidate_id, kind, seed, status, stop_reason, best_score, improved, evals_used, evals_invalid, identity_digest FROM rollouts ORDER BY id",
  evaluations: "SELECT rollout_id, idx, valid, score, reason, program_sha FROM evaluations ORDER BY rollout_id, idx",
  decisions: "SELECT round, candidate_id, decision, rule, reason, score, detail FROM decisions ORDER BY round, candidate_id",
  noise: "SELECT program_sha, repeats, stochastic, basis, n, invalid, mean, sd, spread FROM noise",
  noise_evaluations:
    "SELECT round, program_sha, idx, purpose, valid, score, reason FROM noise_evaluations ORDER BY round, program_sha, idx",
  measurements:
    "SELECT id, round, candidate_id, commit_sha, content_hash, benchmark, split, status, tasks, solved, infra, mean_score FROM measurements ORDER BY id",
  task_results:
    "SELECT measurement_id, task_id, idx, job_id, seed, status, score, steps, tokens, error, extracted, answer FROM task_results ORDER BY measurement_id, idx",
  method_state:
    "SELECT candidate_id, method, parents, rationale, kept, rule, reason, state FROM method_state ORDER BY candidate_id",
};

/**
 * Field-by-field differences between two runs' records: rounds, candidates, rollouts, evaluations, decisions, noise,
 * QA measurements, and the method's own records (its parents, keep decisions and state; a table a run made before
 * methods existed is read as empty).
 */
export function compareRecords(a: Db, b: Db): { counts: Record<string, number>; differences: string[] } {
  const differences: string[] = [];
  const counts: Record<string, number> = {};
  for (const [table, sql] of Object.entries(QUERIES)) {
    const rows = (db: Db) => (hasTable(db, table) ? (db.prepare(sql).all() as Record<string, unknown>[]) : []);
    const x = rows(a);
    const y = rows(b);
    counts[table] = x.length;
    if (x.length !== y.length) differences.push(`${table}: ${x.length} rows ≠ ${y.length} rows`);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      for (const k of Object.keys(x[i] ?? {})) {
        if (JSON.stringify(x[i]?.[k]) !== JSON.stringify(y[i]?.[k]))
          differences.push(
            `${table}[${i}].${k}: ${JSON.stringify(x[i]?.[k])?.slice(0, 80)} ≠ ${JSON.stringify(y[i]?.[k])?.slice(0, 80)}`,
          );
      }
    }
  }
  return { counts, differences };
}
