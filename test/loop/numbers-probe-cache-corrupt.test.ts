import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ResponseStore, requestKey, withCache } from "../../src/model/cache.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";
import { tempDir } from "../helpers/fixtures.ts";

const request: ChatRequest = { messages: [{ role: "user", content: "Improve the packing." }], sampling: { temperature: 0.7 } };

function live(): ChatModel & { calls: number } {
  let n = 0;
  return {
    id: "m",
    get calls() {
      return n;
    },
    async complete(): Promise<ChatResponse> {
      n++;
      return {
        message: {
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "evaluate_program", arguments: "{}" } }],
        },
        finish_reason: "tool_calls",
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        latency_ms: 4,
        attempts: 1,
        model: "m",
      };
    },
  };
}

// Entries a damaged or hand-edited cache file can hold: JSON with a message and a tool_calls list, but not a response
// the agent loop can read. Before, each was served as a hit, and the rollout failed on it ("Cannot read properties of
// null (reading 'id')" for the first), where issue 6 says a corrupt entry is a miss.
const damaged: Record<string, unknown> = {
  "a null tool call": {
    message: { content: null, tool_calls: [null] },
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  },
  "a tool call without a function": {
    message: { content: null, tool_calls: [{ id: "x" }] },
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  },
  "usage that is not counts": { message: { content: "hi", tool_calls: [] }, usage: "lots" },
  "no usage": { message: { content: "hi", tool_calls: [] } },
  "content that is not text": {
    message: { content: 42, tool_calls: [] },
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  },
};

describe("a damaged entry in the shared request cache", () => {
  it.each(Object.keys(damaged))("with %s is a miss: the model is called, and the entry is replaced", async (what) => {
    const dir = tempDir();
    const shared = new ResponseStore(join(dir, "requests.db"));
    const model = live();
    shared.put(requestKey(model, request), "m", damaged[what] as ChatResponse);
    const cached = withCache(model, { mode: "read-write", read: [shared], write: [shared] });
    const r = await cached.scoped("r00-seed").complete(request);
    expect(r.cached).toBeUndefined();
    expect(r.message.tool_calls[0]?.function.name).toBe("evaluate_program");
    expect(model.calls).toBe(1);
    // The live response took the damaged entry's place: the next identical request is a hit.
    const again = await withCache(live(), { mode: "read-write", read: [shared], write: [shared] })
      .scoped("r")
      .complete(request);
    expect(again.cached).toBe(true);
    expect(again.message.tool_calls[0]?.id).toBe("call_1");
    shared.close();
  });
});
