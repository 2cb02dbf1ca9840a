import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ResponseStore, requestKey, withCache } from "../../src/model/cache.ts";
import { ModelError } from "../../src/model/errors.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";
import { tempDir } from "../helpers/fixtures.ts";

const request: ChatRequest = { messages: [{ role: "user", content: "hi" }], sampling: { temperature: 0.7, seed: 1 } };
function counting(fail = false): ChatModel & { calls: number } {
  let n = 0;
  const m = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, {});
  return {
    id: "m",
    get calls() {
      return n;
    },
    wireBody: (r) => m.wireBody(r),
    async complete(): Promise<ChatResponse> {
      n++;
      if (fail) throw new ModelError("server_error", "boom", { url: "x" });
      return {
        message: { content: `answer ${n}`, tool_calls: [] },
        finish_reason: "stop",
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        latency_ms: 50,
        attempts: 1,
        model: "m",
      };
    },
  };
}
const store = () => new ResponseStore(join(tempDir(), "c.db"));

describe("request cache", () => {
  it("keys on the exact wire body plus the trial index, not on the endpoint", () => {
    const a = new OpenAICompatibleModel({ baseUrl: "http://a/v1", model: "m" }, {});
    const b = new OpenAICompatibleModel({ baseUrl: "http://b/v1", model: "m" }, {});
    expect(requestKey(a, request)).toBe(requestKey(b, request));
    expect(requestKey(a, { ...request, trial: 1 })).not.toBe(requestKey(a, request));
    expect(requestKey(a, { ...request, sampling: { temperature: 0.7, seed: 2 } })).not.toBe(requestKey(a, request));
    expect(
      requestKey(new OpenAICompatibleModel({ baseUrl: "http://a/v1", model: "m", dialect: "openai" }, {}), {
        ...request,
        sampling: { max_tokens: 5 },
      }),
    ).not.toBe(requestKey(a, { ...request, sampling: { max_tokens: 5 } }));
  });

  it("serves a repeat from the cache, flagged and with zero latency; repeats with another trial index are not collapsed", async () => {
    const inner = counting();
    const s = store();
    const m = withCache(inner, { mode: "read-write", read: [s], write: [s] });
    const first = await m.complete(request);
    const again = await m.complete(request);
    expect(inner.calls).toBe(1);
    expect(again).toMatchObject({ cached: true, latency_ms: 0, message: first.message });
    await m.complete({ ...request, trial: 1 });
    expect(inner.calls).toBe(2);
  });

  it("never caches errors", async () => {
    const inner = counting(true);
    const s = store();
    const m = withCache(inner, { mode: "read-write", read: [s], write: [s] });
    await expect(m.complete(request)).rejects.toThrow("boom");
    await expect(m.complete(request)).rejects.toThrow("boom");
    expect(inner.calls).toBe(2);
    expect(s.stats().entries).toBe(0);
  });

  it("keeps the first write", () => {
    const s = store();
    const r = (content: string): ChatResponse => ({
      message: { content, tool_calls: [] },
      finish_reason: "stop",
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      latency_ms: 1,
      attempts: 1,
      model: "m",
    });
    s.put("k", "m", r("first"));
    s.put("k", "m", r("second"));
    expect(s.get("k")?.message.content).toBe("first");
  });

  it("reads a corrupt entry as a miss, not a crash", async () => {
    const dir = tempDir();
    const s = new ResponseStore(join(dir, "c.db"));
    const inner = counting();
    const m = withCache(inner, { mode: "read-write", read: [s], write: [s] });
    await m.complete(request);
    const raw = new Database(join(dir, "c.db"));
    raw.prepare("UPDATE responses SET response = '{not json'").run();
    raw.close();
    const r = await m.complete(request);
    expect(r.cached).toBeUndefined();
    expect(inner.calls).toBe(2);
  });

  it("replay mode never calls the model and refuses an unrecorded request", async () => {
    const inner = counting();
    const s = store();
    await withCache(inner, { mode: "read-write", read: [s], write: [s] }).complete(request);
    const replay = withCache(inner, { mode: "replay", read: [s], write: [] });
    expect((await replay.complete(request)).cached).toBe(true);
    const err = await replay.complete({ ...request, trial: 3 }).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.kind).toBe("replay_miss");
    expect(inner.calls).toBe(1);
  });

  it("off mode still records the run's calls but reuses nothing", async () => {
    const inner = counting();
    const run = store();
    const m = withCache(inner, { mode: "off", read: [run], write: [run] });
    await m.complete(request);
    await m.complete(request);
    expect(inner.calls).toBe(2);
    expect(run.stats().entries).toBe(1);
  });
});
