import { join } from "node:path";
import { type Db, hasTable, openDb } from "../store/db.ts";
import { allDecisions } from "../store/decisions.ts";
import { methodDecisions } from "../store/method-state.ts";
import { loadNoise } from "../store/noise.ts";
import { measurements, solvedMatrix } from "../store/qa.ts";
import { Lineage, type Placed } from "./lineage.ts";

type Row = Record<string, unknown>;
/** How many results a reader keeps (pages of the round table and the lineage are keyed by their offsets). */
const MEMO_KEYS = 64;
const parse = <T>(text: string | null, fallback: T): T => (text ? (JSON.parse(text) as T) : fallback);

/**
 * One run directory's records, read-only. Lists are paginated; whatever needs every candidate (the curve, parents,
 * the lineage) comes from one scan kept in a CandidateIndex, rebuilt only when another process has committed to
 * the database since (SQLite's data_version), so no query runs once per candidate and none needs an index that a
 * run written by an older hone may lack.
 */
/** The method a run's config names: a built-in's name, a bring-your-own method folder's last part. */
const methodName = (m: string | undefined) => (m ? (m.split("/").filter(Boolean).pop() ?? m) : "harnessttt");

export class RunReader {
  private readonly db: Db;
  private readonly memo = new Map<string, { version: number; value: unknown }>();

  constructor(readonly dir: string) {
    this.db = openDb(join(dir, "hone.db"), { readonly: true });
  }

  close(): void {
    this.db.close();
  }

  /**
   * Whether this is a hone.db at all: SQLite reads the file (a corrupt one, or another program's, throws here, not
   * in the middle of a page or of a live check) and it has hone's runs table.
   */
  readable(): boolean {
    try {
      this.version();
      if (!hasTable(this.db, "runs")) return false;
      // Another program's (or another version's) runs table lacks hone's columns: every page would be an error 500.
      this.overview();
      return true;
    } catch {
      return false;
    }
  }

  /** Changes whenever another connection commits to the database. */
  version(): number {
    return this.db.pragma("data_version", { simple: true }) as number;
  }

  /** Drops what was computed (the registry calls it for runs nobody looked at for a while). */
  forget(): void {
    this.memo.clear();
  }

  private cached<T>(key: string, compute: () => T): T {
    const version = this.version();
    const hit = this.memo.get(key);
    if (hit && hit.version === version) return hit.value as T;
    const value = compute();
    if (this.memo.size >= MEMO_KEYS) this.memo.clear(); // pages asked for at many offsets: start again
    this.memo.set(key, { version, value });
    return value;
  }

  private runRow() {
    return this.db.prepare("SELECT kind, created_at, finished_at, status, config, summary FROM runs WHERE id = 'run'").get() as
      | { kind: string; created_at: string; finished_at: string | null; status: string; config: string; summary: string | null }
      | undefined;
  }

  /** What the runs list shows: task, method, models, status, best score, cost, start. */
  overview() {
    const o = this.cached("overview", () => this.computeOverview());
    if (!o) return null;
    // The clock of a run in progress moves without a commit.
    const end = o.finished_at ? Date.parse(o.finished_at) : Date.now();
    return { ...o, cost: { ...o.cost, seconds: (end - Date.parse(o.created_at)) / 1000 } };
  }

  private computeOverview() {
    const run = this.runRow();
    if (!run) return null;
    const config = parse<
      Row & {
        task?: string;
        benchmark?: string | { id?: string };
        executor?: { model?: string };
        proposer?: { model?: string };
        /** `hone run` and `hone eval` record the model's name; `hone train` its settings. */
        model?: string | { model?: string };
        /** `hone train`'s panel names its benchmark. */
        panel?: { benchmark?: string };
        estimator?: { proposer?: { model?: string } };
        learning?: { mode?: string };
        method?: string;
        rounds?: number;
        proposals?: number;
        /** What runs made before the rename recorded. */
        proposalsPerRound?: number;
        maxEvals?: number;
      }
    >(run.config, {});
    // `hone eval` records one measurement: its accuracy is the run's score.
    const summary = parse<{ best_score?: number; start_score?: number; accuracy?: number }>(run.summary, {});
    const progress = this.db
      .prepare(
        `SELECT (SELECT MAX(round) FROM rounds WHERE status = 'finished') AS rounds_done,
                (SELECT MAX(best_score) FROM rounds) AS best_round_score,
                (SELECT MIN(incumbent_score) FROM rounds WHERE round = 0) AS start_score,
                (SELECT COUNT(*) FROM rollouts) AS rollouts`,
      )
      .get() as { rounds_done: number | null; best_round_score: number | null; start_score: number | null; rollouts: number };
    const calls = this.db
      .prepare(
        "SELECT COUNT(*) AS calls, COALESCE(SUM(prompt_tokens), 0) AS prompt_tokens, COALESCE(SUM(completion_tokens), 0) AS completion_tokens, COALESCE(SUM(cached), 0) AS cached FROM model_calls",
      )
      .get() as { calls: number; prompt_tokens: number; completion_tokens: number; cached: number };
    const rounds = this.db
      .prepare("SELECT incumbent_score, best_score FROM rounds WHERE status = 'finished' ORDER BY round")
      .all() as { incumbent_score: number | null; best_score: number | null }[];
    return {
      kind: run.kind,
      status: run.status,
      // A QA run's target is its benchmark (hone optimize --benchmark, hone eval's runs say so the same way).
      task:
        config.task ??
        (typeof config.benchmark === "string" ? config.benchmark : config.benchmark?.id) ??
        config.panel?.benchmark ??
        null,
      method: [run.kind, run.kind === "optimize" ? methodName(config.method) : undefined, config.learning?.mode]
        .filter(Boolean)
        .join(" · "),
      executor: config.executor?.model ?? (typeof config.model === "string" ? config.model : config.model?.model) ?? null,
      proposer: config.proposer?.model ?? config.estimator?.proposer?.model ?? null,
      rounds_planned: config.rounds ?? null,
      rounds_done: progress.rounds_done ?? 0,
      proposals: config.proposals ?? config.proposalsPerRound ?? null,
      max_evals: config.maxEvals ?? null,
      // A train epoch records a best only when it promotes: until one does, HEAD is the seed, at its measured score.
      best_score:
        summary.best_score ??
        (run.kind === "eval" ? summary.accuracy : undefined) ??
        progress.best_round_score ??
        (run.kind === "train" ? progress.start_score : null),
      start_score: summary.start_score ?? progress.start_score,
      rollouts: progress.rollouts,
      round_scores: rounds.map((r) => [r.incumbent_score, r.best_score]),
      direction: this.direction(),
      cost: { ...calls, seconds: 0 },
      created_at: run.created_at,
      finished_at: run.finished_at,
      config,
    };
  }

  rounds() {
    return this.cached("rounds", () =>
      this.db
        .prepare(
          "SELECT round, status, incumbent_commit, incumbent_score, best_score, moved, started_at, finished_at FROM rounds ORDER BY round",
        )
        .all(),
    );
  }

  /** Who descends from whom: two aggregates over the candidates, a row per parent commit (a handful). */
  lineage(): Lineage {
    return this.cached("lineage", () => {
      const holders = this.db
        .prepare(
          `SELECT commit_sha, MIN(id) AS id, parent_commit FROM candidates
           WHERE commit_sha IN (SELECT DISTINCT parent_commit FROM candidates) GROUP BY commit_sha`,
        )
        .all() as { commit_sha: string; id: string; parent_commit: string }[];
      const groups = this.db.prepare("SELECT parent_commit, COUNT(*) AS n FROM candidates GROUP BY parent_commit").all() as {
        parent_commit: string;
        n: number;
      }[];
      return new Lineage(new Map(holders.map((h) => [h.commit_sha, h])), new Map(groups.map((g) => [g.parent_commit, g.n])));
    });
  }

  /**
   * The score chart's columns, one entry per candidate, as JSON text SQLite builds in one pass (50,000 candidates
   * never become 50,000 JavaScript objects). `kind`: 1 scored, 2 no score (refused or failed), 0 not drawn.
   */
  private curveJson(): { total: number; json: string } {
    return this.cached("curve", () => {
      const r = this.db
        .prepare(
          `SELECT COUNT(*) AS total, json_group_array(round) AS round, json_group_array(slot) AS slot, json_group_array(score) AS score,
                  json_group_array(CASE WHEN score IS NOT NULL THEN 1 WHEN status IN ('pending', 'seed') THEN 0 ELSE 2 END) AS kind
           FROM candidates`,
        )
        .get() as { total: number; round: string; slot: string; score: string; kind: string };
      return { total: r.total, json: `{"round":${r.round},"slot":${r.slot},"score":${r.score},"kind":${r.kind}}` };
    });
  }

  /**
   * The run page as JSON text: the overview, every round, the curve's columns; candidates and the lineage come a
   * page at a time from their own routes.
   */
  runPageJson(id: string): string | null {
    const overview = this.overview();
    if (!overview) return null;
    const curve = this.curveJson();
    const head = JSON.stringify({ id, ...overview, rounds: this.rounds(), candidates_total: curve.total });
    return `${head.slice(0, -1)},"curve":${curve.json}}`;
  }

  /** The rows the round table and the lineage show, each with its parent and how many children it has. */
  private withLineage(rows: (Row & Placed & { status: string; score: number | null; changed: string | null })[]) {
    const lineage = this.lineage();
    const seedScores = new Map(rows.filter((r) => r.status === "seed").map((r) => [r.id, this.seedScore(r)]));
    return rows.map(({ parent_commit: _p, ...r }) => ({
      ...r,
      score: seedScores.has(r.id) ? (seedScores.get(r.id) ?? null) : r.score,
      changed: parse<string[]>(r.changed, []),
      parent: lineage.parentOf({ ...r, parent_commit: _p }),
      children: lineage.childCount({ ...r, parent_commit: _p }),
    }));
  }

  private hasIndex(name: string): boolean {
    return this.cached(`index ${name}`, () =>
      Boolean(this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").get(name)),
    );
  }

  /**
   * Where a candidate's rollouts are found fast: by the rollouts_candidate index, or, in a run written before it
   * (rows there are wide: every rollout keeps its best program, so a scan reads the whole table), through the
   * rounds index. A rollout runs in its candidate's round or later; the hone that wrote such a run recorded a
   * seed's baseline in the seed's own round.
   */
  private rolloutsOf(c: { id: string; round: number; status: string }): { where: string; args: unknown[] } {
    if (this.hasIndex("rollouts_candidate")) return { where: "candidate_id = ?", args: [c.id] };
    const round = c.status === "seed" ? "round = ?" : "round >= ?";
    return { where: `run_id = 'run' AND ${round} AND candidate_id = ?`, args: [c.round, c.id] };
  }

  /** A seed's score is its baseline rollouts' best, else the score recorded for it. */
  private seedScore(c: { id: string; round: number; status: string; score?: unknown }): number | null {
    const { where, args } = this.rolloutsOf(c);
    const best = (
      this.db.prepare(`SELECT MAX(best_score) AS s FROM rollouts WHERE ${where}`).get(...args) as { s: number | null }
    ).s;
    // A seed measured on a QA panel (`hone train`, optimize on a benchmark) has no rollouts: its recorded score stands.
    return best ?? (typeof c.score === "number" ? c.score : null);
  }

  private static readonly COLUMNS =
    "id, round, slot, status, score, reward, advantage, changed, gate_error, repaired, commit_sha, parent_commit";

  /** The round table's rows: newest round first, a page at a time; `q` keeps ids containing it. */
  candidates(offset: number, limit: number, q = "") {
    return this.cached(`candidates ${offset} ${limit} ${q}`, () => this.candidatesPage(offset, limit, q));
  }

  private candidatesPage(offset: number, limit: number, q: string) {
    const where = q ? "run_id = 'run' AND instr(id, ?) > 0" : "run_id = 'run'";
    const args = q ? [q] : [];
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM candidates WHERE ${where}`).get(...args) as { n: number }).n;
    const rows = this.db
      .prepare(`SELECT ${RunReader.COLUMNS} FROM candidates WHERE ${where} ORDER BY round DESC, slot, id LIMIT ? OFFSET ?`)
      .all(...args, limit, offset) as Parameters<RunReader["withLineage"]>[0];
    const decided = this.keepDecisions(rows.map((r) => r.id));
    const items = this.withLineage(rows).map((r) => ({ ...r, method_decision: decided.get(r.id) ?? null }));
    return { total, offset, limit, items };
  }

  /**
   * Each candidate's keep decision: the method's own (method_state), else the verdict the run recorded for it in
   * `decisions` (a `hone train` epoch's StrictPareto verdict has no method state).
   */
  private keepDecisions(ids: string[]): Map<string, { kept: boolean | null; rule: string | null; reason: string | null }> {
    const decided = hasTable(this.db, "method_state") ? methodDecisions(this.db, "run", ids) : new Map();
    const missing = ids.filter((id) => !decided.has(id));
    if (missing.length === 0 || !hasTable(this.db, "decisions")) return decided;
    const rows = this.db
      .prepare(
        `SELECT candidate_id, decision, rule, reason FROM decisions WHERE run_id = 'run' AND candidate_id IN (${missing.map(() => "?").join(", ")})`,
      )
      .all(...missing) as { candidate_id: string; decision: string; rule: string; reason: string }[];
    for (const r of rows)
      decided.set(r.candidate_id, {
        kept: r.decision === "promote",
        rule: r.rule,
        reason: r.decision === "unmeasurable" ? `unmeasurable: ${r.reason}` : r.reason,
      });
    return decided;
  }

  /**
   * The lineage a page at a time. `node` null and offset 0: the top of the tree, the first `limit` candidates by
   * round (a parent is always from an earlier round, so these form a tree; a small run shows whole). `node` null
   * and offset > 0: more roots. Otherwise one node's children. Each row says how many children it has, so the page
   * knows what is left to load.
   */
  lineagePage(node: string | null, offset: number, limit: number) {
    return this.cached(`lineage ${JSON.stringify(node)} ${offset} ${limit}`, () => this.lineageSlice(node, offset, limit));
  }

  private lineageSlice(node: string | null, offset: number, limit: number) {
    const lineage = this.lineage();
    const select = (where: string, args: unknown[]) =>
      this.db
        .prepare(`SELECT ${RunReader.COLUMNS} FROM candidates WHERE ${where} ORDER BY round, slot, id LIMIT ? OFFSET ?`)
        .all(...args, limit, offset) as Parameters<RunReader["withLineage"]>[0];
    const roots = lineage.roots();
    if (node === null && offset === 0)
      return { node, total: roots.total, offset, limit, items: this.withLineage(select("run_id = 'run'", [])) };
    if (node === null) {
      const args = [JSON.stringify(roots.orphanCommits), JSON.stringify(roots.selfParented)];
      const rows = select("parent_commit IN (SELECT value FROM json_each(?)) OR id IN (SELECT value FROM json_each(?))", args);
      return { node, total: roots.total, offset, limit, items: this.withLineage(rows) };
    }
    const row = this.db.prepare(`SELECT ${RunReader.COLUMNS} FROM candidates WHERE id = ?`).get(node) as Placed | undefined;
    if (!row) return null;
    const commit = lineage.childrenCommit(row);
    const items = commit ? this.withLineage(select("parent_commit = ? AND id <> ?", [commit, row.id])) : [];
    return { node, total: lineage.childCount(row), offset, limit, items };
  }

  direction(): "maximize" | "minimize" {
    const row = this.db.prepare("SELECT identity FROM rollouts WHERE identity IS NOT NULL LIMIT 1").get() as
      | { identity: string }
      | undefined;
    return parse<{ task?: { direction?: string } }>(row?.identity ?? null, {}).task?.direction === "minimize"
      ? "minimize"
      : "maximize";
  }

  candidate(id: string) {
    const row = this.db
      .prepare(
        `SELECT id, round, slot, status, score, reward, advantage, spec, changed, gate_error, repaired, parent_commit, commit_sha,
                content_hash FROM candidates WHERE id = ?`,
      )
      .get(id) as (Row & Placed & { status: string; spec: string | null; changed: string | null }) | undefined;
    if (!row) return null;
    return {
      ...row,
      score: row.status === "seed" ? this.seedScore(row) : row.score,
      parent: this.lineage().parentOf(row),
      spec: parse(row.spec, null),
      changed: parse<string[]>(row.changed, []),
      rollouts: this.db
        .prepare(
          `SELECT id, kind, status, stop_reason, error, start_score, best_score, improved, evals_used, evals_invalid, seconds
           FROM rollouts WHERE ${this.rolloutsOf(row).where} ORDER BY id`,
        )
        .all(...this.rolloutsOf(row).args),
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

  /** The measurement identity the run's first rollout recorded: optimize's seed rollout, `hone run`'s one rollout. */
  firstIdentity(): unknown {
    const seed = this.db.prepare("SELECT identity FROM rollouts WHERE id = 'r00-seed'").get() as
      | { identity: string | null }
      | undefined;
    const row =
      seed ??
      (this.db.prepare("SELECT identity FROM rollouts WHERE identity IS NOT NULL ORDER BY round, id LIMIT 1").get() as
        | { identity: string | null }
        | undefined);
    return parse(row?.identity ?? null, null);
  }

  /** A rollout's folder relative to the run folder: `hone run` writes its one rollout into the run folder itself. */
  rolloutFolder(id: string): string {
    const inRunFolder = this.runRow()?.kind === "run" && this.db.prepare("SELECT 1 FROM rollouts WHERE id = ?").get(id);
    return inRunFolder ? "" : `rollouts/${id}/`;
  }

  rollout(id: string) {
    const row = this.db
      .prepare(
        `SELECT id, round, candidate_id, kind, seed, status, stop_reason, error, start_score, best_score, improved, evals_used,
                evals_invalid, prompt_tokens, completion_tokens, model_calls, seconds, identity, identity_digest, finished_at
         FROM rollouts WHERE id = ?`,
      )
      .get(id) as (Row & { identity: string | null }) | undefined;
    if (!row) return null;
    const evaluations = this.db
      .prepare("SELECT idx, valid, score, reason, program_sha, seconds FROM evaluations WHERE rollout_id = ? ORDER BY idx")
      .all(id);
    return { ...row, identity: parse(row.identity, null), evaluations };
  }

  /** A QA run's per-task results a page at a time (`hone eval`: one measurement; `hone train`: one per epoch). */
  taskResults(offset: number, limit: number) {
    if (!hasTable(this.db, "task_results")) return { total: 0, offset, limit, measurements: [], items: [] };
    return this.cached(`tasks ${offset} ${limit}`, () => {
      const items = this.db
        .prepare(
          `SELECT measurement_id, task_id, status, score, steps, tokens, error, extracted, answer, trajectory
           FROM task_results ORDER BY measurement_id, idx LIMIT ? OFFSET ?`,
        )
        .all(limit, offset) as { measurement_id: string }[];
      const shown = new Set(items.map((i) => i.measurement_id)); // a run of many candidates: only this page's
      return {
        total: (this.db.prepare("SELECT COUNT(*) AS n FROM task_results").get() as { n: number }).n,
        offset,
        limit,
        measurements: measurements(this.db).filter((m) => shown.has(m.id)),
        items,
      };
    });
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
    return this.cached("fingerprint", () => {
      const more = hasTable(this.db, "task_results")
        ? ", (SELECT COUNT(*) FROM decisions) AS d, (SELECT COUNT(*) FROM task_results) AS tr"
        : "";
      return JSON.stringify(
        this.db
          .prepare(
            `SELECT (SELECT status FROM runs WHERE id = 'run') AS s, (SELECT COUNT(*) FROM rounds WHERE status = 'finished') AS r,
                    (SELECT COUNT(*) FROM candidates) AS c, (SELECT COUNT(*) FROM candidates WHERE score IS NOT NULL) AS cs,
                    (SELECT COUNT(*) FROM rollouts) AS ro${more}`,
          )
          .get(),
      );
    });
  }
}
