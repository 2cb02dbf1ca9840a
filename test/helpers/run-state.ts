import { join } from "node:path";
import Database from "better-sqlite3";

/**
 * Everything a resumed QA run must end with as an uninterrupted one does, read from its hone.db: choice, scores,
 * decisions, credit, measurements and the method's state.
 */
export function qaFinalState(dir: string) {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const all = (sql: string) => db.prepare(sql).all();
  const state = {
    candidates: all(
      "SELECT id, round, slot, status, parent_commit, commit_sha, content_hash, spec, score, reward, advantage FROM candidates ORDER BY id",
    ),
    rounds: all("SELECT round, status, incumbent_commit, incumbent_score, best_score, moved FROM rounds ORDER BY round"),
    decisions: all("SELECT round, candidate_id, decision, rule, reason, score FROM decisions ORDER BY round, candidate_id"),
    measurements: all("SELECT id, candidate_id, split, status, tasks, solved, infra, mean_score FROM measurements ORDER BY id"),
    tasks: all("SELECT measurement_id, task_id, status, score, answer FROM task_results ORDER BY measurement_id, task_id"),
    methodState: all("SELECT candidate_id, method, parents, kept, rule, reason, state FROM method_state ORDER BY candidate_id"),
    summary: JSON.parse((db.prepare("SELECT summary FROM runs").get() as { summary: string }).summary),
  };
  db.close();
  return state;
}
