import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Recording, type ShippedRecords } from "../../src/loop/recording.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A queued or Slurm job's records come back whole, and go into the run whole: one transaction per job, so a run never
// holds part of a job's records (its folder is written only after they are in).

const key = (n: number) => n.toString(16).padStart(64, "0");
const response = (text: string) => ({ message: { role: "assistant", content: text, tool_calls: [] }, finish_reason: "stop" });
const records = (from: number): ShippedRecords =>
  ({
    responses: [0, 1, 2].map((i) => ({ key: key(from + i), model: "offline", response: response(`answer ${from + i}`) })),
    evaluations: [{ key: key(from + 9), result: { valid: true, score: 0.5, metrics: {}, artifacts: {}, seconds: 0.01 } }],
  }) as unknown as ShippedRecords;

const count = (runDir: string, table: string) => {
  const db = new Database(join(runDir, "hone.db"), { readonly: true });
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe("Recording.import", () => {
  it("takes a job's responses and evaluations into the run's hone.db", () => {
    const runDir = tempDir("recording-import-");
    const run = new Recording(runDir, { cache: { mode: "off" } });
    run.import(records(100));
    run.import(records(200));
    run.close();
    expect(count(runDir, "responses")).toBe(6);
    expect(count(runDir, "evaluation_records")).toBe(2);
  });

  it("takes none of a job's records when one of them cannot be written", () => {
    const runDir = tempDir("recording-import-");
    const run = new Recording(runDir, { cache: { mode: "off" } });
    run.import(records(100));
    // The job's evaluation fails after its responses went in, as on a full disk.
    const other = new Database(join(runDir, "hone.db"));
    other.exec("CREATE TRIGGER refuse BEFORE INSERT ON evaluation_records BEGIN SELECT RAISE(ABORT, 'refused'); END");
    expect(() => run.import(records(200))).toThrow(/refused/);
    other.exec("DROP TRIGGER refuse");
    other.close();
    run.import(records(300));
    run.close();
    expect(count(runDir, "responses")).toBe(6);
    expect(count(runDir, "evaluation_records")).toBe(2);
  });
});
