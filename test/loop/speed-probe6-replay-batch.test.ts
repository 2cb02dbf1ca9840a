import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { Recording } from "../../src/loop/recording.ts";
import { occurrenceKey, requestKey } from "../../src/model/cache.ts";
import type { ChatRequest, ChatResponse } from "../../src/model/types.ts";
import { evaluationKey } from "../../src/task/recorded-evaluations.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A replay's own records (`hone replay`) are written in batches, one transaction each, and at the close: every record
// still lands, in the order it was made, with the value it had when it was made.

const SCOPE = "r01-k0";
const request = (i: number): ChatRequest => ({ messages: [{ role: "user", content: `question ${i}` }] });
const response = (i: number): ChatResponse =>
  ({
    message: { role: "assistant", content: `answer ${i}`, tool_calls: [] },
    usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    finish_reason: "stop",
  }) as unknown as ChatResponse;

const evaluation = (i: number) => ({ valid: true, score: i, metrics: {}, artifacts: {}, seconds: 0.01 });

function recordedRun(keys: string[], evaluations: string[] = []): string {
  const dir = tempDir("hone-recorded-");
  const db = new Database(join(dir, "hone.db"));
  db.exec("CREATE TABLE responses (key TEXT PRIMARY KEY, model TEXT, response TEXT NOT NULL, created_at TEXT NOT NULL)");
  db.exec("CREATE TABLE evaluation_records (key TEXT PRIMARY KEY, result TEXT NOT NULL)");
  const put = db.prepare("INSERT INTO responses (key, model, response, created_at) VALUES (?, 'offline', ?, 'then')");
  for (const [i, k] of keys.entries()) put.run(k, JSON.stringify(response(i)));
  const evaluated = db.prepare("INSERT INTO evaluation_records (key, result) VALUES (?, ?)");
  for (const [i, k] of evaluations.entries()) evaluated.run(k, JSON.stringify(evaluation(i)));
  db.close();
  return dir;
}

const own = (dir: string, sql = "SELECT key, response FROM responses ORDER BY rowid") => {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  try {
    return db.prepare(sql).all() as { key: string; response: string }[];
  } finally {
    db.close();
  }
};

describe("a replay's own records", () => {
  it("are all written by the close, in order, as they were when made (more than one batch)", async () => {
    const n = 600;
    const out = tempDir("hone-replay-");
    // The keys as the replay computes them: the replay model's wire body, its scope and occurrence.
    const probe = new Recording(tempDir("hone-probe-"), { cache: { mode: "replay" }, replayOf: recordedRun([]) });
    const wire = (await probe.model({ model: "offline" })).model;
    probe.close();
    const keys = Array.from({ length: n }, (_, i) => occurrenceKey(requestKey(wire, request(i)), SCOPE, 0));
    const recording = new Recording(out, { cache: { mode: "replay" }, replayOf: recordedRun(keys) });
    try {
      const model = (await recording.model({ model: "offline" })).model.scoped(SCOPE);
      for (let i = 0; i < n; i++) {
        const r = await model.complete(request(i));
        expect(r.message.content).toBe(`answer ${i}`);
        // What the agent loop does with a response afterwards is not what was recorded.
        (r.message as { content: string }).content = "changed later";
      }
    } finally {
      recording.close();
    }
    const rows = own(out);
    expect(rows.map((r) => r.key)).toEqual(keys);
    expect(rows.map((r) => (JSON.parse(r.response) as ChatResponse).message.content)).toEqual(keys.map((_, i) => `answer ${i}`));
  });

  it("hold every evaluation served, in order, as it was when served", async () => {
    const n = 300;
    const out = tempDir("hone-replay-");
    const program = (i: number) => `print(${i})\n`;
    const keys = Array.from({ length: n }, (_, i) => evaluationKey("t".repeat(64), program(i), SCOPE, 0));
    const recording = new Recording(out, { cache: { mode: "replay" }, replayOf: recordedRun([], keys) });
    try {
      const evaluate = recording.evaluator(async () => ({}) as never, "t".repeat(64)).scoped(SCOPE);
      for (let i = 0; i < n; i++) {
        const e = await evaluate(program(i));
        expect(e.score).toBe(i);
        e.score = -1;
      }
    } finally {
      recording.close();
    }
    const rows = own(out, "SELECT key, result AS response FROM evaluation_records ORDER BY rowid");
    expect(rows.map((r) => r.key)).toEqual(keys);
    expect(rows.map((r) => (JSON.parse(r.response) as { score: number }).score)).toEqual(keys.map((_, i) => i));
  });
});
