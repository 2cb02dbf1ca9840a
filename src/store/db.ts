import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { withoutPassword } from "../secret-url.ts";
import { HONE_VERSION } from "../version.ts";
import { syncToDisk } from "./atomic.ts";

// The native module loads with the first database opened, not with every command whose modules import this one.
let sqlite: typeof BetterSqlite3 | undefined;
/** A connection with SQLite's defaults (the store's modules set what they need). */
export const Database = (path: string, opts?: BetterSqlite3.Options): BetterSqlite3.Database => {
  sqlite ??= createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
  return new sqlite(path, opts);
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, created_at TEXT NOT NULL, status TEXT NOT NULL,
  config TEXT NOT NULL, summary TEXT, finished_at TEXT
);
CREATE TABLE IF NOT EXISTS rounds (
  run_id TEXT NOT NULL, round INTEGER NOT NULL, status TEXT NOT NULL,
  incumbent_commit TEXT NOT NULL, incumbent_score REAL, best_score REAL, moved INTEGER NOT NULL DEFAULT 0,
  proposer_model TEXT, proposer_prompt TEXT, proposer_completion TEXT,
  started_at TEXT NOT NULL, finished_at TEXT, PRIMARY KEY (run_id, round)
);
CREATE TABLE IF NOT EXISTS candidates (
  id TEXT PRIMARY KEY, run_id TEXT NOT NULL, round INTEGER NOT NULL, slot INTEGER NOT NULL,
  parent_commit TEXT NOT NULL, commit_sha TEXT, ref TEXT, content_hash TEXT,
  spec TEXT, changed TEXT, status TEXT NOT NULL, gate_error TEXT, repaired INTEGER NOT NULL DEFAULT 0,
  reward REAL, advantage REAL, score REAL
);
CREATE TABLE IF NOT EXISTS rollouts (
  id TEXT PRIMARY KEY, run_id TEXT NOT NULL, round INTEGER NOT NULL, candidate_id TEXT NOT NULL,
  kind TEXT NOT NULL, seed INTEGER NOT NULL, status TEXT NOT NULL, stop_reason TEXT, error TEXT,
  start_score REAL, best_score REAL, improved INTEGER, evals_used INTEGER, evals_invalid INTEGER,
  prompt_tokens INTEGER, completion_tokens INTEGER, model_calls INTEGER, seconds REAL, dir TEXT,
  best_program TEXT, finished_at TEXT, identity TEXT, identity_digest TEXT
);
CREATE TABLE IF NOT EXISTS evaluations (
  rollout_id TEXT NOT NULL, idx INTEGER NOT NULL, valid INTEGER NOT NULL, score REAL, reason TEXT,
  program_sha TEXT NOT NULL, seconds REAL, PRIMARY KEY (rollout_id, idx)
);
CREATE TABLE IF NOT EXISTS model_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, role TEXT NOT NULL, rollout_id TEXT, round INTEGER,
  latency_ms REAL, prompt_tokens INTEGER, completion_tokens INTEGER, attempts INTEGER, cached INTEGER NOT NULL DEFAULT 0,
  faults TEXT
);
CREATE TABLE IF NOT EXISTS decisions (
  run_id TEXT NOT NULL, round INTEGER NOT NULL, candidate_id TEXT NOT NULL, decision TEXT NOT NULL, rule TEXT NOT NULL,
  reason TEXT NOT NULL, score REAL, detail TEXT, PRIMARY KEY (run_id, round, candidate_id)
);
CREATE TABLE IF NOT EXISTS noise (
  run_id TEXT PRIMARY KEY, program_sha TEXT NOT NULL, repeats INTEGER NOT NULL, stochastic INTEGER NOT NULL,
  basis TEXT NOT NULL, n INTEGER NOT NULL, invalid INTEGER NOT NULL, mean REAL, sd REAL NOT NULL, spread REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS noise_evaluations (
  run_id TEXT NOT NULL, round INTEGER NOT NULL, program_sha TEXT NOT NULL, idx INTEGER NOT NULL, purpose TEXT NOT NULL,
  valid INTEGER NOT NULL, score REAL, reason TEXT, seconds REAL, result TEXT NOT NULL,
  PRIMARY KEY (run_id, round, program_sha, idx)
);
CREATE TABLE IF NOT EXISTS measurements (
  id TEXT PRIMARY KEY, run_id TEXT NOT NULL, round INTEGER NOT NULL, candidate_id TEXT NOT NULL, commit_sha TEXT,
  content_hash TEXT NOT NULL, benchmark TEXT NOT NULL, split TEXT, status TEXT NOT NULL, tasks INTEGER NOT NULL,
  solved INTEGER, infra INTEGER, mean_score REAL, started_at TEXT NOT NULL, finished_at TEXT
);
CREATE TABLE IF NOT EXISTS task_results (
  measurement_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, job_id TEXT NOT NULL, seed INTEGER NOT NULL,
  status TEXT NOT NULL, score REAL NOT NULL, steps INTEGER NOT NULL, tokens INTEGER NOT NULL, error TEXT, extracted TEXT,
  answer TEXT, detail TEXT, trajectory TEXT, finished_at TEXT NOT NULL, PRIMARY KEY (measurement_id, task_id)
);
CREATE TABLE IF NOT EXISTS method_state (
  run_id TEXT NOT NULL, candidate_id TEXT NOT NULL, method TEXT NOT NULL, parents TEXT NOT NULL, rationale TEXT,
  kept INTEGER, rule TEXT, reason TEXT, state TEXT, PRIMARY KEY (run_id, candidate_id)
);
CREATE INDEX IF NOT EXISTS candidates_round ON candidates (run_id, round);
CREATE INDEX IF NOT EXISTS rollouts_round ON rollouts (run_id, round);
CREATE INDEX IF NOT EXISTS model_calls_rollout ON model_calls (rollout_id);
CREATE INDEX IF NOT EXISTS rollouts_candidate ON rollouts (candidate_id);
CREATE INDEX IF NOT EXISTS candidates_commit ON candidates (commit_sha);
CREATE INDEX IF NOT EXISTS candidates_parent ON candidates (parent_commit);
`;

export const SCHEMA_VERSION = "2";

export type Db = BetterSqlite3.Database;

/**
 * Opens (creating if needed) a run's hone.db: SQLite in WAL mode, synchronous FULL so that no commit is lost, not even
 * to a power cut. `readonly` opens an existing one to read (`openReader`). `replay`: a replay's hone.db, synchronous
 * NORMAL: a commit is not synced on its own (a replay made ~35 commits, each an fsync of the WAL, ~0.1 s of a 0.6 s
 * replay on a disk) but at each checkpoint and at the close; a killed process loses no commit either way, only a
 * crash of the machine can roll back the last ones, and a replay is a copy made again at will (one stopped is
 * removed; one killed leaves its folder, and the next replay takes another).
 */
export function openDb(path: string, opts: { readonly?: boolean; replay?: boolean } = {}): Db {
  if (opts.readonly) return openReader(path);
  const db = Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(opts.replay ? "synchronous = NORMAL" : "synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  applySchema(db);
  return db;
}

/** The connections `openReader` made: the ones that never change the schema (`hasTable` keeps what it found). */
const readers = new WeakSet<Db>();

/**
 * A connection that reads an existing hone.db and refuses every SQL statement that would write (query_only). Where
 * this process may write the file and its folder, it is opened for writing all the same: the last connection to
 * close a WAL database then removes the -wal and -shm files its readers made, which SQLite's read-only connections
 * leave behind (every finished run kept them, from the reads after its end). Closing last, it also folds into
 * hone.db what a killed writer left committed in the -wal, as the next writer would: the records read the same. A
 * read-only mount or file is opened read-only.
 */
function openReader(path: string): Db {
  if (!writable(path) && existsSync(path) && !existsSync(`${path}-wal`)) return openImage(path);
  const db = Database(path, { readonly: !writable(path), fileMustExist: true });
  if (!db.readonly) db.pragma("query_only = ON");
  readers.add(db);
  return db;
}

/**
 * A run this process may only read (another user's, a read-only copy) with no -wal beside it: all of it is in
 * hone.db, but SQLite reads a WAL database only through a -shm file it makes beside it, which it cannot make there
 * ("attempt to write a readonly database"). So the file is read into memory and opened from there, read-only; its
 * header's WAL mark (bytes 18 and 19) is set to a rollback journal's, which an image in memory needs.
 */
function openImage(path: string): Db {
  const image = readFileSync(path);
  if (image.length >= 20 && image[18] === 2 && image[19] === 2) image.fill(1, 18, 20);
  sqlite ??= createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
  const db = new sqlite(image, { readonly: true });
  readers.add(db);
  return db;
}

/** Whether this process may write the file and the folder where SQLite puts its -wal and -shm (a link's target's). */
function writable(path: string): boolean {
  try {
    const real = realpathSync(path);
    accessSync(real, constants.W_OK);
    accessSync(dirname(real), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The tables and the schema's version, in one transaction: with synchronous FULL each statement on its own was a
 * commit with its own fsync (22 of them). */
function applySchema(db: Db): void {
  db.transaction(() => {
    db.exec(SCHEMA);
    db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)").run(SCHEMA_VERSION);
  })();
}

export const now = () => new Date().toISOString();

export type RunKind = "run" | "eval" | "train" | "optimize";

/** Every string in a run's settings that is a URL with a password, the password replaced (`withoutPassword`). */
const redactPasswords = (_key: string, value: unknown) => (typeof value === "string" ? withoutPassword(value) : value);

/**
 * Creates a run directory's hone.db with its run row already in it (built under another name, then renamed), so
 * a run killed at any point either has nothing to resume or can be resumed from its stored configuration; a URL's
 * password in the configuration is never written. Leaves an existing hone.db as it is.
 *
 * No process reads the file before the rename, so it is built with neither journal nor sync and made durable once,
 * whole: the file, then its folder's entry. Built in WAL mode with synchronous FULL, its commits and the checkpoint
 * at close took ~6 fsyncs: beside a starting warm pool, as in `hone optimize`'s set-up, 59 ms against 23 ms now
 * (medians, `npm run bench -- startup`).
 */
export function createRunDb(path: string, kind: RunKind, config: unknown): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  const building = `${path}.new`;
  rmSync(building, { force: true }); // what a killed build left (a -wal it left is not taken: records.test.ts)
  const fresh = Database(building);
  try {
    fresh.pragma("journal_mode = OFF");
    fresh.pragma("synchronous = OFF");
    applySchema(fresh);
    fresh
      .prepare("INSERT INTO runs (id, kind, created_at, status, config) VALUES ('run', ?, ?, 'running', ?)")
      .run(kind, now(), JSON.stringify(config, redactPasswords));
    // The version whose rules the run's records follow: only it replays or resumes the run (loop/hone-version.ts).
    fresh.prepare("INSERT INTO meta (key, value) VALUES ('hone', ?)").run(HONE_VERSION);
    fresh.pragma("journal_mode = WAL"); // written in the file: every later opening is in WAL mode
  } finally {
    fresh.close();
  }
  syncToDisk(building);
  renameSync(building, path);
  syncToDisk(dirname(path));
}

export interface RunRow {
  kind: RunKind;
  created_at: string;
  finished_at: string | null;
  status: string;
  config: string;
  summary: string | null;
}

/**
 * A resumed run's `--rounds`, kept in its settings when it goes further than they say: the run, stopped again, is
 * resumed (and replayed) to the rounds it was last given, not to those it was started with.
 */
export function extendRunRounds(db: Db, rounds: number): void {
  db.prepare(
    "UPDATE runs SET config = json_set(config, '$.rounds', ?) WHERE id = 'run' AND json_extract(config, '$.rounds') < ?",
  ).run(rounds, rounds);
}

export function runRow(db: Db): RunRow | undefined {
  return db.prepare("SELECT kind, created_at, finished_at, status, config, summary FROM runs WHERE id = 'run'").get() as
    | RunRow
    | undefined;
}

/**
 * What names a run's jobs in a queue (`<prefix>-<created>-<digest>`): its creation time and a digest of its stored
 * configuration, both fixed at its creation, so a resumed coordinator finds the jobs it queued; the digest tells apart
 * two runs created in the same millisecond (a grid's cells started together), whose identical first jobs would
 * otherwise be one job, taken from the queue by the first coordinator before the second could read it.
 */
export function runQueueKey(db: Db, prefix: string): string {
  const row = runRow(db);
  const digest = createHash("sha256")
    .update(row?.config ?? "")
    .digest("hex")
    .slice(0, 12);
  return `${prefix}-${(row?.created_at ?? "").replace(/[^0-9]/g, "")}-${digest}`;
}

export function finishRun(db: Db, summary: unknown, status = "finished"): void {
  db.prepare("UPDATE runs SET status = ?, finished_at = ?, summary = ? WHERE id = 'run'").run(
    status,
    now(),
    JSON.stringify(summary),
  );
}

/**
 * Opens (creating if needed) a file of records by key shared between processes, whose tables `addRecordTable` makes:
 * the request cache, a run's recorded responses and evaluations. WAL with synchronous NORMAL: a record may be lost on power loss (never on a process crash) and the
 * file stays consistent, without an fsync per write on the hot path of every model call and evaluation.
 */
export function openRecordDb(path: string): Db {
  mkdirSync(dirname(path), { recursive: true });
  const db = Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("busy_timeout = 10000");
  } catch (err) {
    db.close(); // a file opened but refused (read-only, damaged) is not left open by a connection no one holds
    throw err;
  }
  return db;
}

/** Creates a table of records, if missing, on a connection `openRecordDb` opened (one connection can hold several). */
export function addRecordTable(db: Db, schema: string): void {
  db.transaction(() => db.exec(schema))();
}

const tables = new WeakMap<Db, Set<string>>();

/**
 * Whether a run's hone.db has a table: run directories written by older versions lack the newer tables, and are
 * opened read-only (never migrated by a reader), so queries on those tables read as empty.
 */
export function hasTable(db: Db, name: string): boolean {
  let known = tables.get(db);
  if (!known) {
    known = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name),
    );
    if (readers.has(db)) tables.set(db, known);
  }
  return known.has(name);
}

export interface RoundRow {
  round: number;
  incumbent_score: number | null;
  best_score: number | null;
  moved: number;
}

/** Whether a run directory's hone.db records any round (a start that failed before round 0 has nothing to resume). */
export function anyRound(db: Db): boolean {
  return db.prepare("SELECT 1 FROM rounds LIMIT 1").get() !== undefined;
}

/** A run's rounds in order: the incumbent's score going in, the best score reached, whether the incumbent moved. */
export function roundRows(db: Db, runId: string): RoundRow[] {
  return db
    .prepare("SELECT round, incumbent_score, best_score, moved FROM rounds WHERE run_id = ? ORDER BY round")
    .all(runId) as RoundRow[];
}
