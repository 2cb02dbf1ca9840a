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
/** A JSON column, or `fallback` when it is empty or not JSON (a damaged record spoils its field, not the page). */
const parse = <T>(text: unknown, fallback: T): T => {
  if (typeof text !== "string" || !text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
};
/** A JSON list of texts (a candidate's changes): anything else in it written out, a column that is no list `[]`. */
const texts = (column: unknown): string[] => {
  const v = parse<unknown>(column, []);
  return Array.isArray(v) ? v.map((x) => (typeof x === "string" ? x : JSON.stringify(x))) : [];
};

/*
 * A run folder may be someone else's, and SQLite keeps whatever a column is given (text in a REAL column, a blob in a
 * TEXT one, JSON that is not an object). What the runs list and the run page's head send is held to the shapes the
 * pages draw: one odd row must never leave the list of every run blank.
 */
/** A field of a parsed record that should hold an object (`executor`, `learning`…), else `{}`. */
const field = (v: unknown): Row => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Row) : {});
/** JSON text of an object, else `{}` (not JSON, null, a number, a list). */
const parseObject = (text: unknown): Row => field(parse<unknown>(text, {}));
/** A value shown as text: a string as it is, a finite number written out, anything else null. */
const text = (v: unknown): string | null =>
  typeof v === "string" ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : null;
/** A finite number, else null (NaN and ±Infinity are null in JSON anyway; a string or blob is no number). */
const finite = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
/** Milliseconds since the epoch of an ISO time from the records, or NaN. */
const time = (v: unknown) => (typeof v === "string" ? Date.parse(v) : Number.NaN);

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
    const end = o.finished_at ? time(o.finished_at) : Date.now();
    return { ...o, cost: { ...o.cost, seconds: finite((end - time(o.created_at)) / 1000) } };
  }

  private computeOverview() {
    const run = this.runRow();
    if (!run) return null;
    const config = parseObject(run.config);
    // `hone eval` records one measurement: its accuracy is the run's score.
    const summary = parseObject(run.summary);
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
    const kind = text(run.kind) ?? "unknown";
    // `hone run` and `hone eval` record the model's name; `hone train` its settings; `hone train`'s panel names its
    // benchmark; runs made before the rename recorded proposalsPerRound.
    const model = typeof config.model === "string" ? config.model : field(config.model).model;
    const benchmark = typeof config.benchmark === "string" ? config.benchmark : field(config.benchmark).id;
    return {
      kind,
      status: text(run.status) ?? "unknown",
      // A QA run's target is its benchmark (hone optimize --benchmark, hone eval's runs say so the same way).
      task: text(config.task) ?? text(benchmark) ?? text(field(config.panel).benchmark),
      method: [
        kind,
        kind === "optimize" ? methodName(text(config.method) ?? undefined) : undefined,
        text(field(config.learning).mode),
      ]
        .filter(Boolean)
        .join(" · "),
      executor: text(field(config.executor).model) ?? text(model),
      proposer: text(field(config.proposer).model) ?? text(field(field(config.estimator).proposer).model),
      rounds_planned: finite(config.rounds),
      rounds_done: finite(progress.rounds_done) ?? 0,
      proposals: finite(config.proposals) ?? finite(config.proposalsPerRound),
      max_evals: finite(config.maxEvals),
      // A train epoch records a best only when it promotes: until one does, HEAD is the seed, at its measured score.
      best_score:
        finite(summary.best_score) ??
        (kind === "eval" ? finite(summary.accuracy) : null) ??
        finite(progress.best_round_score) ??
        (kind === "train" ? finite(progress.start_score) : null),
      start_score: finite(summary.start_score) ?? finite(progress.start_score),
      rollouts: progress.rollouts,
      round_scores: rounds.map((r) => [finite(r.incumbent_score), finite(r.best_score)]),
      direction: this.direction(),
      cost: {
        calls: calls.calls,
        prompt_tokens: finite(calls.prompt_tokens) ?? 0,
        completion_tokens: finite(calls.completion_tokens) ?? 0,
        cached: finite(calls.cached) ?? 0,
        seconds: 0 as number | null,
      },
      created_at: text(run.created_at),
      finished_at: text(run.finished_at),
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
      changed: texts(r.changed),
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
    return field(parseObject(row?.identity).task).direction === "minimize" ? "minimize" : "maximize";
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
      changed: texts(row.changed),
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
