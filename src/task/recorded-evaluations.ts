import { createHash } from "node:crypto";
import type { Statement } from "better-sqlite3";
import { type Db, openRecordDb } from "../store/db.ts";
import type { Evaluation } from "./evaluation.ts";

/**
 * Every evaluation of a run, by (task content, program, limits). Recorded always; read back only on replay, so a
 * live run never trusts an old result of an evaluator that may not be deterministic.
 */
export class EvaluationRecords {
  private readonly db: Db;
  private readonly select: Statement;
  private readonly insert: Statement;
  constructor(path: string) {
    this.db = openRecordDb(path, "CREATE TABLE IF NOT EXISTS evaluation_records (key TEXT PRIMARY KEY, result TEXT NOT NULL)");
    this.select = this.db.prepare("SELECT result FROM evaluation_records WHERE key = ?");
    this.insert = this.db.prepare("INSERT OR IGNORE INTO evaluation_records (key, result) VALUES (?, ?)");
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
    this.insert.run(key, JSON.stringify(e));
  }
  close(): void {
    this.db.close();
  }
}

export const evaluationKey = (taskHash: string, program: string) =>
  createHash("sha256").update(`${taskHash}\0${program}`).digest("hex");

/** Wraps an evaluate function: records every result; with `replayFrom`, serves recorded results first. */
export function recordingEvaluator(
  evaluate: (program: string) => Promise<Evaluation>,
  taskHash: string,
  record: EvaluationRecords,
  replayFrom: EvaluationRecords[] = [],
): (program: string) => Promise<Evaluation> {
  return async (program) => {
    const key = evaluationKey(taskHash, program);
    for (const r of replayFrom) {
      const hit = r.get(key);
      if (hit) {
        if (r !== record) record.put(key, hit);
        return hit;
      }
    }
    const e = await evaluate(program);
    record.put(key, e);
    return e;
  };
}
