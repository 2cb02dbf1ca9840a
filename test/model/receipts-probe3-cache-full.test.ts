import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MemoryResponses, ResponseStore, withCache } from "../../src/model/cache.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";
import { openRecordDb } from "../../src/store/db.ts";
import { tempDir } from "../helpers/fixtures.ts";

// Before: a shared request cache that filled up (a full disk; `--cache-dir` on a small tmpfs) threw SQLITE_FULL out
// of the model call: every rollout after it failed with "SqliteError: database or disk is full" (scored -1, so
// decisions changed), and the run ended in "hone: internal error". The cache only saves calls; the run's own
// records are what replay needs.
const BIG = "x".repeat(20_000);

function model(): ChatModel & { calls: number } {
  let n = 0;
  return {
    id: "m",
    get calls() {
      return n;
    },
    async complete(r: ChatRequest): Promise<ChatResponse> {
      n++;
      return {
        message: { content: `${BIG} ${JSON.stringify(r.messages).length} ${n}`, tool_calls: [] },
        finish_reason: "stop",
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        latency_ms: 5,
        attempts: 1,
        model: "m",
      };
    },
  };
}

/** A shared cache whose file cannot grow past what it holds now, as on a full disk. */
function fullCache(said: string[]): ResponseStore {
  const s = new ResponseStore(join(tempDir(), "requests.db"), (t) => said.push(t));
  const db = (s as unknown as { db: { pragma: (p: string, o?: object) => unknown } }).db;
  const pages = db.pragma("page_count", { simple: true }) as number;
  db.pragma(`max_page_count = ${pages + 8}`);
  return s;
}

const ask = (i: number): ChatRequest => ({ messages: [{ role: "user", content: `question ${i}` }], sampling: { seed: 1 } });

describe("a shared request cache that cannot be written any more", () => {
  it("costs no model call: each is answered and recorded in the run's records, and the trouble is said once", async () => {
    const said: string[] = [];
    const shared = fullCache(said);
    const own = new MemoryResponses();
    const inner = model();
    const m = withCache(inner, { mode: "read-write", read: [shared], write: [shared], record: own });
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await m.complete(ask(i)));
    expect(answers.every((a) => a.message.content?.startsWith(BIG))).toBe(true);
    expect(inner.calls).toBe(12);
    expect(own.entries()).toHaveLength(12);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/the request cache .*requests\.db could not be written \(SQLITE_FULL: .*\); this run goes on/);
    // What it still holds is served.
    const again = await m.complete(ask(0));
    expect(again.message.content).toBe(answers[0]?.message.content);
    shared.close();
  });

  it("is the run's own records' failure to keep loudly: a run whose records cannot be written stops", () => {
    const db = openRecordDb(join(tempDir(), "hone.db"));
    const own = new ResponseStore(db, () => {
      throw new Error("never said: thrown");
    });
    db.pragma(`max_page_count = ${(db.pragma("page_count", { simple: true }) as number) + 1}`);
    const response: ChatResponse = {
      message: { content: BIG.repeat(10), tool_calls: [] },
      finish_reason: "stop",
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      latency_ms: 5,
      attempts: 1,
      model: "m",
    };
    expect(() => {
      for (let i = 0; i < 10; i++) own.put(`k${i}`, "m", response);
    }).toThrow(/full/);
    db.close();
  });
});
