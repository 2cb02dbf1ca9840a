import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { RunReader } from "../../src/console/run-reader.ts";
import { runReceipt } from "../../src/loop/receipt.ts";
import { passwordRedacted } from "../../src/secret-url.ts";
import { createRunDb, hasTable, openDb, runRow, SCHEMA_VERSION } from "../../src/store/db.ts";
import { allDecisions } from "../../src/store/decisions.ts";
import { loadNoise } from "../../src/store/noise.ts";
import { finishMeasurement, insertTaskResult, measurements, solvedMatrix, startMeasurement } from "../../src/store/qa.ts";
import { insertModelCalls } from "../../src/store/rollouts.ts";
import { tempDir } from "../helpers/fixtures.ts";

/** A run's hone.db marked finished, with its writer still open (its -wal and -shm beside it). */
function finishedRun() {
  const dir = join(tempDir(), "run");
  const path = join(dir, "hone.db");
  createRunDb(path, "optimize", {});
  const writer = openDb(path);
  writer.prepare("UPDATE runs SET status = 'finished'").run();
  return { dir, path, writer };
}
describe("hone.db", () => {
  it("appears whole with its run row, and is left as it is when it exists", () => {
    const path = join(tempDir(), "run", "hone.db");
    createRunDb(path, "eval", { benchmark: "gsm8k" });
    createRunDb(path, "train", { other: true });
    const db = openDb(path, { readonly: true });
    expect(runRow(db)).toMatchObject({ kind: "eval", status: "running", config: '{"benchmark":"gsm8k"}' });
    db.close();
  });

  it("appears in WAL mode with nothing beside it, whatever a killed build left (a stale -wal included)", () => {
    const dir = join(tempDir(), "run");
    const path = join(dir, "hone.db");
    mkdirSync(dir, { recursive: true });
    // A build killed after a commit: its file and a WAL that holds a table of its own.
    const stale = new Database(`${path}.new`);
    stale.pragma("journal_mode = WAL");
    stale.exec("CREATE TABLE intruder (x); INSERT INTO intruder VALUES (1);");
    copyFileSync(`${path}.new-wal`, join(dir, "kept-wal"));
    stale.close();
    renameSync(join(dir, "kept-wal"), `${path}.new-wal`);
    createRunDb(path, "optimize", { task: "t" });
    expect(readdirSync(dir)).toEqual(["hone.db"]);
    const header = readFileSync(path).subarray(18, 20);
    expect([...header]).toEqual([2, 2]); // WAL mode, kept in the file
    const db = openDb(path, { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(hasTable(db, "intruder")).toBe(false);
    expect(runRow(db)).toMatchObject({ kind: "optimize", config: '{"task":"t"}' });
    expect(db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({ value: SCHEMA_VERSION });
    db.close();
  });

  it("is read without a write, and a finished run's folder keeps no -wal or -shm after its readers close", () => {
    const { dir, path, writer } = finishedRun();
    const reader = openDb(path, { readonly: true });
    expect(() => reader.prepare("UPDATE runs SET status = 'forged'").run()).toThrow(/readonly/i);
    expect(readdirSync(dir).sort()).toEqual(["hone.db", "hone.db-shm", "hone.db-wal"]);
    reader.close(); // the writer is still open: its files stay
    expect(readdirSync(dir).sort()).toEqual(["hone.db", "hone.db-shm", "hone.db-wal"]);
    writer.close();
    const bytes = readFileSync(path);
    for (let i = 0; i < 2; i++) {
      const later = openDb(path, { readonly: true });
      expect(runRow(later)?.status).toBe("finished");
      later.close();
    }
    expect(readdirSync(dir)).toEqual(["hone.db"]);
    expect(readFileSync(path).equals(bytes)).toBe(true); // reading changed nothing in the file
  });

  it("a reader closing last folds in what a killed writer left in the -wal, and the records read the same", () => {
    const { dir, writer } = finishedRun();
    // The folder as a kill would leave it: that commit is in the -wal alone.
    const killed = join(tempDir(), "killed");
    mkdirSync(killed);
    for (const f of ["hone.db", "hone.db-wal"]) copyFileSync(join(dir, f), join(killed, f));
    writer.close();
    for (let i = 0; i < 2; i++) {
      const reader = openDb(join(killed, "hone.db"), { readonly: true });
      expect(runRow(reader)?.status).toBe("finished");
      reader.close();
      expect(readdirSync(killed)).toEqual(["hone.db"]);
    }
  });

  it("a proposer round's calls recorded again replace the first attempt's, and no other round's or rollout's", () => {
    const path = join(tempDir(), "run", "hone.db");
    createRunDb(path, "optimize", {});
    const db = openDb(path);
    const call = (tokens: number) => ({
      latencyMs: 1,
      promptTokens: tokens,
      completionTokens: 1,
      attempts: 1,
      cached: false,
      faults: null,
    });
    insertModelCalls(db, "run", "proposer", null, 1, [call(10)]);
    insertModelCalls(db, "run", "proposer", null, 2, [call(20), call(21)]);
    insertModelCalls(db, "run", "executor", "r02-k0", 2, [call(30)]);
    insertModelCalls(db, "run", "proposer", null, 2, [call(22), call(23)]);
    const rows = db.prepare("SELECT role, round, prompt_tokens AS t FROM model_calls ORDER BY id").all();
    db.close();
    expect(rows).toEqual([
      { role: "proposer", round: 1, t: 10 },
      { role: "executor", round: 2, t: 30 },
      { role: "proposer", round: 2, t: 22 },
      { role: "proposer", round: 2, t: 23 },
    ]);
  });

  it("never stores a URL's password: the settings keep the URL with *** in its place", () => {
    const path = join(tempDir(), "run", "hone.db");
    const settings = {
      queue: "redis://:s3cret-pw@queue.example.org:6379/2",
      executor: { model: "m", baseUrl: "https://alice:tok%2Fen@api.example.org/v1" },
      proposer: { baseUrl: "https://api.example.org/v1", note: "a:b@c is not a URL" },
    };
    createRunDb(path, "optimize", settings);
    const db = openDb(path, { readonly: true });
    const config = runRow(db)?.config ?? "";
    db.close();
    expect(config).not.toMatch(/s3cret|tok%2Fen/);
    expect(JSON.parse(config)).toEqual({
      queue: "redis://:***@queue.example.org:6379/2",
      executor: { model: "m", baseUrl: "https://alice:***@api.example.org/v1" },
      proposer: settings.proposer,
    });
    expect(passwordRedacted(JSON.parse(config).queue)).toBe(true);
    expect(passwordRedacted("redis://127.0.0.1:6379")).toBe(false);
  });

  it("a measurement is pending until closed, then carries its aggregates", () => {
    const db = openDb(join(tempDir(), "hone.db"));
    startMeasurement(db, "run", {
      id: "epoch-01",
      round: 1,
      candidateId: "epoch-01",
      commit: "c",
      contentHash: "h",
      benchmark: "gsm8k",
      split: "test",
      tasks: 3,
    });
    const task = (id: string, idx: number, status: "solved" | "unsolved" | "infra", score: number) =>
      insertTaskResult(db, "epoch-01", {
        task_id: id,
        idx,
        job_id: `j${idx}`,
        seed: 0,
        status,
        score,
        steps: 2,
        tokens: 10,
        error: status === "infra" ? "worker died" : null,
        extracted: null,
        answer: null,
        detail: null,
        trajectory: null,
      });
    task("a", 0, "solved", 1);
    expect(measurements(db)[0]).toMatchObject({ status: "pending", solved: null });
    task("b", 1, "unsolved", 0);
    task("c", 2, "infra", 0);
    finishMeasurement(db, "epoch-01");
    expect(measurements(db)[0]).toMatchObject({ status: "finished", solved: 1, infra: 1, mean_score: 0.5 });
    expect(solvedMatrix(db).map((r) => r.status)).toEqual(["solved", "unsolved", "infra"]);
    db.close();
  });

  it("a run directory written before the measurement tables existed still reads: as having none", () => {
    const dir = tempDir();
    const old = new Database(join(dir, "hone.db"));
    old.exec(`CREATE TABLE runs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, created_at TEXT NOT NULL, status TEXT NOT NULL, config TEXT NOT NULL, summary TEXT, finished_at TEXT);
      CREATE TABLE rounds (run_id TEXT NOT NULL, round INTEGER NOT NULL, status TEXT NOT NULL, incumbent_commit TEXT NOT NULL, incumbent_score REAL, best_score REAL, moved INTEGER NOT NULL DEFAULT 0, proposer_model TEXT, proposer_prompt TEXT, proposer_completion TEXT, started_at TEXT NOT NULL, finished_at TEXT, PRIMARY KEY (run_id, round));
      CREATE TABLE candidates (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, round INTEGER NOT NULL, slot INTEGER NOT NULL, parent_commit TEXT NOT NULL, commit_sha TEXT, ref TEXT, content_hash TEXT, spec TEXT, changed TEXT, status TEXT NOT NULL, gate_error TEXT, repaired INTEGER NOT NULL DEFAULT 0, reward REAL, advantage REAL, score REAL);
      CREATE TABLE rollouts (id TEXT PRIMARY KEY, run_id TEXT NOT NULL, round INTEGER NOT NULL, candidate_id TEXT NOT NULL, kind TEXT NOT NULL, seed INTEGER NOT NULL, status TEXT NOT NULL, stop_reason TEXT, error TEXT, start_score REAL, best_score REAL, improved INTEGER, evals_used INTEGER, evals_invalid INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER, model_calls INTEGER, seconds REAL, dir TEXT, best_program TEXT, finished_at TEXT, identity TEXT, identity_digest TEXT);
      CREATE TABLE evaluations (rollout_id TEXT NOT NULL, idx INTEGER NOT NULL, valid INTEGER NOT NULL, score REAL, reason TEXT, program_sha TEXT NOT NULL, seconds REAL, PRIMARY KEY (rollout_id, idx));
      CREATE TABLE model_calls (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, role TEXT NOT NULL, rollout_id TEXT, round INTEGER, latency_ms REAL, prompt_tokens INTEGER, completion_tokens INTEGER, attempts INTEGER, cached INTEGER NOT NULL DEFAULT 0, faults TEXT);
      INSERT INTO runs VALUES ('run', 'optimize', '2026-01-01T00:00:00Z', 'finished', '{"task":"t","executor":{"model":"offline"},"proposer":{"model":"offline"}}', NULL, NULL);`);
    old.close();
    const db = openDb(join(dir, "hone.db"), { readonly: true });
    expect(allDecisions(db).size).toBe(0);
    expect(loadNoise(db, "run")).toBeUndefined();
    expect(measurements(db)).toEqual([]);
    db.close();
    const reader = new RunReader(dir);
    expect(reader.measurementRecords()).toEqual({ noise: null, decisions: [], measurements: [], tasks: [] });
    expect(reader.fingerprint()).toContain('"ro":0');
    reader.close();
    expect(runReceipt(dir).measurements).toMatchObject({ qa_measurements: 0, noise_evaluations: { total: 0 } });
  });
});
