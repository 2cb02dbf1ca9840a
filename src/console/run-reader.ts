import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Db, hasTable, openDb } from "../store/db.ts";
import { allDecisions } from "../store/decisions.ts";
import { loadNoise } from "../store/noise.ts";
import { measurements, solvedMatrix } from "../store/qa.ts";

/** One run directory's records, read-only. Every query is a single indexed or aggregate SQL statement. */
export class RunReader {
  private readonly db: Db;

  constructor(readonly dir: string) {
    this.db = openDb(join(dir, "hone.db"), { readonly: true });
  }

  close(): void {
    this.db.close();
  }

  private runRow() {
    return this.db.prepare("SELECT kind, created_at, finished_at, status, config, summary FROM runs WHERE id = 'run'").get() as
      | { kind: string; created_at: string; finished_at: string | null; status: string; config: string; summary: string | null }
      | undefined;
  }

  /** What the runs list shows: task, method, models, status, best score, cost, start. */
  overview() {
    const run = this.runRow();
    if (!run) return null;
    const config = JSON.parse(run.config) as Record<string, unknown> & {
      task?: string;
      executor?: { model?: string; baseUrl?: string };
      proposer?: { model?: string; baseUrl?: string };
      learning?: { mode?: string };
      rounds?: number;
      proposalsPerRound?: number;
      maxMetricCalls?: number;
    };
    const summary = run.summary ? (JSON.parse(run.summary) as { best_score?: number; start_score?: number }) : {};
    const progress = this.db
      .prepare(
        `SELECT (SELECT MAX(round) FROM rounds WHERE status = 'finished') AS rounds_done,
                (SELECT MAX(best_score) FROM rounds) AS best_round_score,
                (SELECT MIN(incumbent_score) FROM rounds WHERE round = 0) AS start_score,
                (SELECT COUNT(*) FROM rollouts) AS rollouts,
                (SELECT COALESCE(SUM(seconds), 0) FROM rollouts) AS rollout_seconds`,
      )
      .get() as {
      rounds_done: number | null;
      best_round_score: number | null;
      start_score: number | null;
      rollouts: number;
      rollout_seconds: number;
    };
    const calls = this.db
      .prepare(
        "SELECT COUNT(*) AS calls, COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens, COALESCE(SUM(completion_tokens), 0) AS completion_tokens, COALESCE(SUM(cached), 0) AS cached FROM model_calls",
      )
      .get() as { calls: number; prompt_tokens: number; completion_tokens: number; cached: number };
    const rounds = this.db
      .prepare("SELECT incumbent_score, best_score FROM rounds WHERE status = 'finished' ORDER BY round")
      .all() as { incumbent_score: number | null; best_score: number | null }[];
    const end = run.finished_at ? Date.parse(run.finished_at) : Date.now();
    return {
      kind: run.kind,
      status: run.status,
      task: config.task ?? null,
      method: `${run.kind}${config.learning?.mode ? ` · ${config.learning.mode}` : ""}`,
      executor: config.executor?.model ?? null,
      proposer: config.proposer?.model ?? null,
      rounds_planned: config.rounds ?? null,
      rounds_done: progress.rounds_done ?? 0,
      proposals_per_round: config.proposalsPerRound ?? null,
      max_evals: config.maxMetricCalls ?? null,
      best_score: summary.best_score ?? progress.best_round_score,
      start_score: summary.start_score ?? progress.start_score,
      rollouts: progress.rollouts,
      round_scores: rounds.map((r) => [r.incumbent_score, r.best_score]),
      direction: this.direction(),
      cost: { ...calls, seconds: (end - Date.parse(run.created_at)) / 1000, rollout_seconds: progress.rollout_seconds },
      created_at: run.created_at,
      finished_at: run.finished_at,
      config,
    };
  }

  /** The run page: rounds, every candidate with its parent (for the lineage), the direction of the metric. */
  runPage() {
    const overview = this.overview();
    if (!overview) return null;
    const rounds = this.db
      .prepare(
        "SELECT round, status, incumbent_commit, incumbent_score, best_score, moved, started_at, finished_at FROM rounds ORDER BY round",
      )
      .all();
    const candidates = this.db
      .prepare(
        `SELECT c.id, c.round, c.slot, c.status,
                CASE WHEN c.status = 'seed' THEN (SELECT MAX(best_score) FROM rollouts r WHERE r.candidate_id = c.id) ELSE c.score END AS score,
                c.reward, c.advantage, c.changed, c.gate_error, c.repaired,
                c.commit_sha, p.id AS parent
         FROM candidates c
         LEFT JOIN (SELECT commit_sha, MIN(id) AS id FROM candidates WHERE commit_sha IS NOT NULL GROUP BY commit_sha) p
           ON p.commit_sha = c.parent_commit AND p.id <> c.id
         ORDER BY c.round, c.slot`,
      )
      .all() as (Record<string, unknown> & { changed: string | null })[];
    return {
      ...overview,
      rounds,
      candidates: candidates.map((c) => ({ ...c, changed: c.changed ? (JSON.parse(c.changed) as string[]) : [] })),
    };
  }

  direction(): "maximize" | "minimize" {
    const row = this.db.prepare("SELECT identity FROM rollouts WHERE identity IS NOT NULL LIMIT 1").get() as
      | { identity: string }
      | undefined;
    const parsed = row ? (JSON.parse(row.identity) as { task?: { direction?: string } }) : {};
    return parsed.task?.direction === "minimize" ? "minimize" : "maximize";
  }

  candidate(id: string) {
    const row = this.db
      .prepare(
        `SELECT id, round, slot, status, score, reward, advantage, spec, changed, gate_error, repaired, parent_commit, commit_sha,
                content_hash FROM candidates WHERE id = ?`,
      )
      .get(id) as
      | (Record<string, unknown> & {
          spec: string | null;
          changed: string | null;
          parent_commit: string;
          commit_sha: string | null;
        })
      | undefined;
    if (!row) return null;
    const parent = this.db
      .prepare("SELECT MIN(id) AS id FROM candidates WHERE commit_sha = ? AND id <> ?")
      .get(row.parent_commit, id) as { id: string | null };
    return {
      ...row,
      parent: parent.id,
      spec: row.spec ? JSON.parse(row.spec) : null,
      changed: row.changed ? (JSON.parse(row.changed) as string[]) : [],
      rollouts: this.db
        .prepare(
          "SELECT id, kind, status, stop_reason, error, start_score, best_score, improved, evals_used, evals_invalid, seconds FROM rollouts WHERE candidate_id = ? ORDER BY id",
        )
        .all(id),
    };
  }

  commitOf(candidateId: string): string | null {
    const row = this.db.prepare("SELECT commit_sha FROM candidates WHERE id = ?").get(candidateId) as
      | { commit_sha: string | null }
      | undefined;
    return row?.commit_sha ?? null;
  }

  rollouts(offset: number, limit: number) {
    const total = (this.db.prepare("SELECT COUNT(*) AS n FROM rollouts").get() as { n: number }).n;
    const items = this.db
      .prepare(
        `SELECT id, round, candidate_id, kind, status, stop_reason, start_score, best_score, improved, evals_used, evals_invalid,
                prompt_tokens, completion_tokens, model_calls, seconds FROM rollouts ORDER BY round, id LIMIT ? OFFSET ?`,
      )
      .all(limit, offset);
    return { total, offset, limit, items };
  }

  rollout(id: string) {
    const row = this.db
      .prepare(
        `SELECT id, round, candidate_id, kind, seed, status, stop_reason, error, start_score, best_score, improved, evals_used,
                evals_invalid, prompt_tokens, completion_tokens, model_calls, seconds, identity, identity_digest, finished_at
         FROM rollouts WHERE id = ?`,
      )
      .get(id) as (Record<string, unknown> & { identity: string | null }) | undefined;
    if (!row) return null;
    const evaluations = this.db
      .prepare("SELECT idx, valid, score, reason, program_sha, seconds FROM evaluations WHERE rollout_id = ? ORDER BY idx")
      .all(id);
    return { ...row, identity: row.identity ? JSON.parse(row.identity) : null, evaluations };
  }

  /** The rollout's trajectory events, a page at a time (a long rollout has thousands). */
  trajectory(id: string, offset: number, limit: number) {
    const path = join(this.dir, "rollouts", id, "trajectory.jsonl");
    if (!/^[A-Za-z0-9_-]+$/.test(id) || !existsSync(path)) return null;
    const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    const events = lines.slice(offset, offset + limit).map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return { type: "unreadable", raw: line.slice(0, 500) };
      }
    });
    return { total: lines.length, offset, limit, events };
  }

  /**
   * What pages need beyond rounds and candidates: the run's noise estimate, every decision with its rule (a candidate
   * without one is still being measured: pending), QA measurements (pending or finished) and the per-task matrix.
   */
  measurementRecords() {
    return {
      noise: loadNoise(this.db, "run") ?? null,
      decisions: [...allDecisions(this.db).values()],
      measurements: measurements(this.db),
      tasks: solvedMatrix(this.db),
    };
  }

  /** A cheap fingerprint of what a live page shows; it changes whenever the run gains records. */
  fingerprint(): string {
    // Decisions and QA task results count too, where the run's hone.db has them (older runs do not).
    const more = hasTable(this.db, "task_results")
      ? ", (SELECT COUNT(*) FROM decisions) AS d, (SELECT COUNT(*) FROM task_results) AS tr"
      : "";
    const row = this.db
      .prepare(
        `SELECT (SELECT status FROM runs WHERE id = 'run') AS s, (SELECT COUNT(*) FROM rounds WHERE status = 'finished') AS r,
                (SELECT COUNT(*) FROM candidates) AS c, (SELECT COUNT(*) FROM candidates WHERE score IS NOT NULL) AS cs,
                (SELECT COUNT(*) FROM rollouts) AS ro${more}`,
      )
      .get() as Record<string, unknown>;
    return JSON.stringify(row);
  }
}
