import { createHash } from "node:crypto";
import type { Statement } from "better-sqlite3";
import { HoneError } from "../errors.ts";
import { addRecordTable, type Db, openRecordDb } from "../store/db.ts";
import { type RecordedRow, recordedRows } from "../store/recorded-rows.ts";
import type { Evaluation } from "./evaluation.ts";

/** Evaluations by key: a run's hone.db, or memory on a worker (shipped back with the job's result). */
export interface EvaluationSink {
  get(key: string): Evaluation | undefined;
  put(key: string, e: Evaluation): void;
}

const EVALUATION_RECORDS = "CREATE TABLE IF NOT EXISTS evaluation_records (key TEXT PRIMARY KEY, result TEXT NOT NULL)";

/**
 * Every evaluation of a run, by (task content, program, scope, occurrence). Recorded always; read back only on
 * replay, so a live run never trusts an old result of an evaluator that may not be deterministic. A later result
 * under the same key replaces the earlier one: a rollout re-run after a kill is the one its records describe.
 */
export class EvaluationRecords implements EvaluationSink {
  private readonly db: Db;
  /** Opened here on a file, so closed here; a connection given by its owner (a run's Recording) is closed by it. */
  private readonly owned: boolean;
  private readonly select: Statement;
  private readonly insert: Statement;
  constructor(at: string | Db) {
    this.owned = typeof at === "string";
    this.db = typeof at === "string" ? openRecordDb(at) : at;
    addRecordTable(this.db, EVALUATION_RECORDS);
    this.select = this.db.prepare("SELECT result FROM evaluation_records WHERE key = ?");
    this.insert = this.db.prepare("INSERT OR REPLACE INTO evaluation_records (key, result) VALUES (?, ?)");
  }
  get(key: string): Evaluation | undefined {
    const row = this.select.get(key) as { result: string } | undefined;
    if (!row) return undefined;
    try {
      return JSON.parse(row.result) as Evaluation;
    } catch {
      return undefined;
    }
  }
  put(key: string, e: Evaluation): void {
    this.putText(key, JSON.stringify(e));
  }
  /** An evaluation already serialised (a replay's batch serialises each as it is served and writes them later). */
  putText(key: string, text: string): void {
    this.insert.run(key, text);
  }
  close(): void {
    if (this.owned) this.db.close();
  }
}

const isObject = (x: unknown) => typeof x === "object" && x !== null && !Array.isArray(x);

/** What is wrong with a recorded evaluation, as a run reads one; undefined when nothing is. */
export function evaluationFault(e: unknown): string | undefined {
  const v = e as Partial<Evaluation> | null;
  if (!isObject(v) || v === null) return "it is not an object";
  if (typeof v.valid !== "boolean") return "valid is not true or false";
  if (v.score !== undefined && (typeof v.score !== "number" || !Number.isFinite(v.score))) return "score is not a number";
  if (v.valid && v.score === undefined) return "a valid evaluation has no score";
  if (!isObject(v.metrics)) return "metrics is not an object";
  if (!isObject(v.artifacts)) return "artifacts is not an object";
  if (typeof v.seconds !== "number" || !(v.seconds >= 0)) return "seconds is not a number ≥ 0";
  if (v.reason !== undefined && typeof v.reason !== "string") return "reason is not text";
  for (const k of ["timedOut", "evaluatorFailed"] as const)
    if (v[k] !== undefined && typeof v[k] !== "boolean") return `${k} is not true or false`;
  return undefined;
}

/**
 * A recorded run's evaluations (\`hone replay\`), on a connection that only reads: never changed, no table added. A
 * record that is not an evaluation as a run writes one is an error naming the record and the file, never served.
 */
export class RecordedEvaluations implements EvaluationSink {
  private readonly read: (key: string) => RecordedRow;
  constructor(
    db: Db,
    private readonly path: string,
  ) {
    this.read = recordedRows(db, "evaluation_records", "result", evaluationFault);
  }
  get(key: string): Evaluation | undefined {
    const r = this.read(key);
    if (r && "fault" in r)
      throw new HoneError(
        "runFailed",
        `replay: the recorded evaluation ${key.slice(0, 16)}… in ${this.path} is damaged: ${r.fault}`,
      );
    return r?.value as Evaluation | undefined;
  }
  put(): void {
    throw new Error("a recorded run's evaluations are read only");
  }
}

export class MemoryEvaluations implements EvaluationSink {
  private readonly byKey = new Map<string, Evaluation>();
  get(key: string): Evaluation | undefined {
    return this.byKey.get(key);
  }
  put(key: string, e: Evaluation): void {
    this.byKey.set(key, e);
  }
  entries(): { key: string; result: Evaluation }[] {
    return [...this.byKey].map(([key, result]) => ({ key, result }));
  }
}

/** The key of the n-th evaluation of `program` in `scope` (a rollout, a round's noise repeats) on this task. */
export const evaluationKey = (taskHash: string, program: string, scope: string, n: number) =>
  createHash("sha256").update(`${taskHash}\0${program}\0scope=${scope}\0n=${n}`).digest("hex");

/** The key runs recorded before occurrences were counted (read only when replaying such a run). */
const legacyKey = (taskHash: string, program: string) => createHash("sha256").update(`${taskHash}\0${program}`).digest("hex");

export type Evaluate = (program: string) => Promise<Evaluation>;

/** An evaluate function with `scoped(name)`: the same evaluator with its own occurrence counters. */
export interface ScopedEvaluate extends Evaluate {
  scoped(scope: string): Evaluate;
}

/** The evaluate function for one scope: a recording evaluator's scoped view, any other function as it is. */
export function evaluateIn(evaluate: Evaluate, scope: string): Evaluate {
  const s = (evaluate as Partial<ScopedEvaluate>).scoped;
  return typeof s === "function" ? s(scope) : evaluate;
}

/**
 * Wraps an evaluate function: records every result under its occurrence key. With `replayFrom` (a replay), results
 * come only from those records, and an evaluation that was never recorded is an error, never a live evaluation.
 */
export function recordingEvaluator(
  evaluate: Evaluate,
  taskHash: string,
  record: EvaluationSink,
  replayFrom?: EvaluationSink[],
): ScopedEvaluate {
  const scoped = (scope: string): Evaluate => {
    const seen = new Map<string, number>();
    return async (program) => {
      const n = seen.get(program) ?? 0;
      seen.set(program, n + 1);
      const key = evaluationKey(taskHash, program, scope, n);
      if (replayFrom) {
        const hit = replayFrom.map((r) => r.get(key) ?? r.get(legacyKey(taskHash, program))).find((x) => x !== undefined);
        if (!hit)
          throw new HoneError(
            "runFailed",
            `replay: this evaluation was never recorded (evaluation ${n} of a program in ${scope || "the run"}); the run cannot be replayed exactly from its records`,
          );
        record.put(key, hit);
        return hit;
      }
      const e = await evaluate(program);
      record.put(key, e);
      return e;
    };
  };
  return Object.assign(scoped(""), { scoped });
}
