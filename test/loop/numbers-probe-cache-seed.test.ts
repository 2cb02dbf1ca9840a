import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ResponseStore, withCache } from "../../src/model/cache.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";
import { tempDir } from "../helpers/fixtures.ts";

/** A hosted model that draws a new answer every call, with hone's real wire body for `model` in the openai dialect. */
function hosted(model: string): ChatModel & { calls: number } {
  const wire = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model, dialect: "openai" }, {});
  let n = 0;
  return {
    id: `http://127.0.0.1:9/v1#${model}`,
    get calls() {
      return n;
    },
    wireBody: (r) => wire.wireBody(r),
    async complete(): Promise<ChatResponse> {
      n++;
      return {
        message: { content: `draw ${n}`, tool_calls: [] },
        finish_reason: "stop",
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        latency_ms: 5,
        attempts: 1,
        model,
      };
    },
  };
}

const sample = (seed: number): ChatRequest => ({
  messages: [{ role: "user", content: "What is 6 * 7?" }],
  sampling: { temperature: 1, seed },
});

describe("the shared cache keeps samples at different seeds apart", () => {
  // The openai dialect sends no seed to reasoning models, so the bodies of `hone eval --samples 3` (or of a
  // candidate's rollouts) are byte-identical: keyed by the body alone, samples 2 and 3 got sample 1's answer.
  it.each(["o4-mini", "gpt-4.1-mini"])(
    "%s: three samples at three seeds are three draws, and a re-run hits each",
    async (name) => {
      const dir = tempDir();
      const shared = new ResponseStore(join(dir, "requests.db"));
      const inner = hosted(name);
      const first = withCache(inner, { mode: "read-write", read: [shared], write: [shared] });
      const texts = async (m: typeof first) =>
        Promise.all([0, 1, 2].map(async (s) => (await m.scoped(`sample-${s}`).complete(sample(100 + s))).message.content));
      expect(await texts(first)).toEqual(["draw 1", "draw 2", "draw 3"]);
      expect(inner.calls).toBe(3);

      // The same samples again: every one is a hit, each its own answer, and a --cache replay run reads them too.
      const again = hosted(name);
      expect(await texts(withCache(again, { mode: "read-write", read: [shared], write: [shared] }))).toEqual([
        "draw 1",
        "draw 2",
        "draw 3",
      ]);
      const replay = hosted(name);
      expect(await texts(withCache(replay, { mode: "replay", read: [shared], write: [] }))).toEqual([
        "draw 1",
        "draw 2",
        "draw 3",
      ]);
      expect(again.calls + replay.calls).toBe(0);
      shared.close();
    },
  );

  it("one seed is still one answer, and a request without a seed keeps its key", async () => {
    const dir = tempDir();
    const shared = new ResponseStore(join(dir, "requests.db"));
    const inner = hosted("o4-mini");
    const m = withCache(inner, { mode: "read-write", read: [shared], write: [shared] });
    const a = await m.scoped("a").complete(sample(7));
    const b = await m.scoped("b").complete(sample(7));
    expect(b.message.content).toBe(a.message.content);
    const unseeded: ChatRequest = { messages: [{ role: "user", content: "hi" }] };
    await m.scoped("c").complete(unseeded);
    await m.scoped("d").complete(unseeded);
    expect(inner.calls).toBe(2);
    shared.close();
  });
});
