import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Recording } from "../../src/loop/recording.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import type { ResolvedModel } from "../../src/model/resolve.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";
import { tempDir } from "../helpers/fixtures.ts";

const request: ChatRequest = {
  messages: [{ role: "user", content: "Natalia sold clips to 48 of her friends… How many clips did she sell?" }],
  sampling: { temperature: 0, seed: 1 },
};

/** A server at `baseUrl` that serves some model under the name `default`, answering `answer`. */
function server(baseUrl: string, answer: string): ResolvedModel & { calls: number } {
  const wire = new OpenAICompatibleModel({ baseUrl, model: "default" }, {});
  let calls = 0;
  const model: ChatModel = {
    id: `${baseUrl}#default`,
    wireBody: (r) => wire.wireBody(r),
    async complete(): Promise<ChatResponse> {
      calls++;
      return {
        message: { content: answer, tool_calls: [] },
        finish_reason: "stop",
        usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 },
        latency_ms: 3,
        attempts: 1,
        model: "default",
      };
    },
  };
  return {
    model,
    baseUrl,
    modelName: "default",
    offline: false,
    close: async () => {},
    get calls() {
      return calls;
    },
  };
}

async function ask(cacheDir: string, s: ResolvedModel, baseUrl: string): Promise<ChatResponse> {
  const run = join(tempDir(), "run");
  mkdirSync(run);
  const recording = new Recording(run, { cache: { mode: "read-write", dir: cacheDir } });
  try {
    const m = await recording.model({ model: "default", baseUrl }, Promise.resolve(s));
    return await m.model.scoped("job-0").complete(request);
  } finally {
    recording.close();
  }
}

describe("the shared request cache and the endpoint", () => {
  // Two llama.cpp/vLLM servers under one model name are two models; keyed by the body alone, the second server's
  // eval was answered from the first one's cache, and its receipt named the second endpoint.
  it("a server at another URL under the same model name is not answered from the first one's entries", async () => {
    const cache = tempDir();
    const a = server("http://gpu1:8000/v1", "72");
    const b = server("http://gpu2:8000/v1", "48");
    expect((await ask(cache, a, "http://gpu1:8000/v1")).message.content).toBe("72");
    const fromB = await ask(cache, b, "http://gpu2:8000/v1");
    expect(fromB.message.content).toBe("48");
    expect(fromB.cached).toBeUndefined();
    expect(b.calls).toBe(1);
  });

  it("the same server is a hit, whatever its URL's password or trailing slash", async () => {
    const cache = tempDir();
    const a = server("http://gpu1:8000/v1", "72");
    await ask(cache, a, "http://u:one@gpu1:8000/v1");
    const again = server("http://gpu1:8000/v1", "other");
    const r = await ask(cache, again, "http://u:two@gpu1:8000/v1/");
    expect(r.cached).toBe(true);
    expect(r.message.content).toBe("72");
    expect(again.calls).toBe(0);
  });
});
