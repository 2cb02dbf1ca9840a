import { afterEach, describe, expect, it } from "vitest";
import { checkEndpoint } from "../../src/model/check.ts";
import { buildRequestBody } from "../../src/model/dialect.ts";
import { ModelError } from "../../src/model/errors.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { backoffDelay, withRetries } from "../../src/model/retry.ts";
import type { ChatRequest } from "../../src/model/types.ts";
import { apiError, completion, startFakeOpenAI } from "../helpers/fake-openai.ts";

const request: ChatRequest = {
  messages: [{ role: "user", content: "hi" }],
  tools: [{ type: "function", function: { name: "ping", description: "p", parameters: { type: "object", properties: {} } } }],
  sampling: {
    temperature: 0.7,
    top_p: 0.9,
    top_k: 20,
    max_tokens: 256,
    seed: 7,
    chat_template_kwargs: { enable_thinking: false },
  },
};
const noSleep = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, sleep: async () => {} };

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});
async function fake(...args: Parameters<typeof startFakeOpenAI>) {
  const f = await startFakeOpenAI(...args);
  closers.push(f.close);
  return f;
}

describe("request dialects", () => {
  it("vllm sends every sampling field including vLLM's extras and uses max_tokens", () => {
    const body = buildRequestBody(request, { dialect: "vllm", model: "m" });
    expect(body).toMatchObject({
      model: "m",
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
      max_tokens: 256,
      seed: 7,
      chat_template_kwargs: { enable_thinking: false },
      tool_choice: "auto",
    });
    expect(body).not.toHaveProperty("max_completion_tokens");
  });
  it("openai sends no vLLM-only fields, max_completion_tokens, and leaves temperature/top_p to the API", () => {
    const body = buildRequestBody(request, { dialect: "openai", model: "m" });
    expect(body).toMatchObject({ model: "m", max_completion_tokens: 256, seed: 7 });
    for (const k of ["top_k", "chat_template_kwargs", "max_tokens", "temperature", "top_p"]) expect(body).not.toHaveProperty(k);
    expect(buildRequestBody(request, { dialect: "openai", model: "m", keepSampling: true })).toMatchObject({
      temperature: 0.7,
      top_p: 0.9,
    });
  });
});

describe("OpenAI-compatible client against a fake server", () => {
  it("sends the vLLM body over the wire and parses tool calls, usage and latency", async () => {
    const f = await fake([
      completion(
        { tool_calls: [{ id: "c1", name: "ping", arguments: '{"word":"pong"}' }] },
        { prompt_tokens: 12, completion_tokens: 3 },
      ),
    ]);
    const m = new OpenAICompatibleModel({ baseUrl: f.url, model: "fake-model" }, {});
    const res = await m.complete(request);
    expect(res.message.tool_calls).toEqual([
      { id: "c1", type: "function", function: { name: "ping", arguments: '{"word":"pong"}' } },
    ]);
    expect(res.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 });
    expect(res.latency_ms).toBeGreaterThan(0);
    const sent = f.chatRequests()[0]?.body;
    expect(sent).toMatchObject({
      model: "fake-model",
      top_k: 20,
      max_tokens: 256,
      chat_template_kwargs: { enable_thinking: false },
    });
  });

  it("sends the hosted body with --dialect openai", async () => {
    const f = await fake([completion({ content: "ok" })]);
    await new OpenAICompatibleModel({ baseUrl: f.url, model: "fake-model", dialect: "openai" }, {}).complete(request);
    const sent = f.chatRequests()[0]?.body ?? {};
    expect(sent.max_completion_tokens).toBe(256);
    expect(sent).not.toHaveProperty("top_k");
    expect(sent).not.toHaveProperty("temperature");
  });

  it("takes the API key from the named environment variable only", async () => {
    const f = await fake([completion({ content: "ok" })]);
    await new OpenAICompatibleModel(
      { baseUrl: f.url, model: "fake-model", apiKeyEnv: "MY_KEY" },
      { MY_KEY: "sk-abc12345" },
    ).complete(request);
    expect(f.chatRequests()[0]?.headers.authorization).toBe("Bearer sk-abc12345");
  });

  it("retries a 429 and then succeeds, honouring Retry-After", async () => {
    const f = await fake([
      apiError(429, "slow down", { "retry-after": "0" }),
      apiError(503, "busy"),
      completion({ content: "ok" }),
    ]);
    const retries: string[] = [];
    const m = withRetries(new OpenAICompatibleModel({ baseUrl: f.url, model: "fake-model" }, {}), {
      ...noSleep,
      onRetry: (r) => retries.push(r.error.kind),
    });
    const res = await m.complete(request);
    expect(res.message.content).toBe("ok");
    expect(res.attempts).toBe(3);
    expect(retries).toEqual(["rate_limited", "server_error"]);
  });

  it("retries a dropped connection and an empty completion", async () => {
    const f = await fake([
      { drop: true },
      { status: 200, body: { id: "x", object: "chat.completion", created: 0, model: "m", choices: [] } },
      completion({ content: "ok" }),
    ]);
    const m = withRetries(new OpenAICompatibleModel({ baseUrl: f.url, model: "fake-model" }, {}), noSleep);
    expect((await m.complete(request)).attempts).toBe(3);
  });

  it("gives up after the bounded number of attempts", async () => {
    const f = await fake([apiError(500, "down")]);
    const m = withRetries(new OpenAICompatibleModel({ baseUrl: f.url, model: "fake-model" }, {}), noSleep);
    await expect(m.complete(request)).rejects.toThrow(/gave up after 4 attempts/);
    expect(f.chatRequests()).toHaveLength(4);
  });

  it("times out a request that never answers and retries it", async () => {
    const f = await fake([{ delayMs: 2000, ...completion({ content: "late" }) }, completion({ content: "ok" })]);
    const m = withRetries(
      new OpenAICompatibleModel({ baseUrl: f.url, model: "fake-model", timeouts: { attempt: 0.2 } }, {}),
      noSleep,
    );
    const res = await m.complete(request);
    expect(res.message.content).toBe("ok");
    expect(res.attempts).toBe(2);
  });

  it("does not retry a 401 and never puts the key in the message", async () => {
    const f = await fake([apiError(401, "Incorrect API key provided: sk-secret-999999")]);
    const m = withRetries(
      new OpenAICompatibleModel({ baseUrl: f.url, model: "fake-model" }, { OPENAI_API_KEY: "sk-secret-999999" }),
      noSleep,
    );
    const err = await m.complete(request).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.kind).toBe("unauthorized");
    expect(err.message).toMatch(/OPENAI_API_KEY/);
    expect(err.message).not.toContain("sk-secret-999999");
    expect(f.chatRequests()).toHaveLength(1);
  });

  it("says plainly when the server is unreachable", async () => {
    const m = new OpenAICompatibleModel({ baseUrl: "http://127.0.0.1:9/v1", model: "x" }, {});
    const err = await m.complete(request).catch((e) => e);
    expect(err.kind).toBe("unreachable");
    expect(err.message).toMatch(/cannot reach http:\/\/127.0.0.1:9\/v1\/chat\/completions/);
  });

  it("backoff grows exponentially with full jitter and respects the cap", () => {
    const p = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.5 };
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(a, p))).toEqual([50, 100, 200, 400, 500]);
    expect(backoffDelay(1, p, 800)).toBe(800);
  });
});

describe("hone models check", () => {
  it("passes for a served model that calls the tool", async () => {
    const f = await fake([completion({ tool_calls: [{ name: "ping", arguments: '{"word":"pong"}' }] })]);
    const r = await checkEndpoint({ baseUrl: f.url, model: "fake-model" }, {});
    expect(r.ok).toBe(true);
    expect(f.chatRequests()[0]?.body?.tool_choice).toBe("required");
  });
  it("names an unknown model and lists the served ones", async () => {
    const f = await fake([completion({ content: "x" })], ["a", "b"]);
    const r = await checkEndpoint({ baseUrl: f.url, model: "zzz" }, {});
    expect(r.ok).toBe(false);
    expect(r.steps[0]?.detail).toMatch(/"zzz" is not among the served models: a, b/);
  });
  it("reports a model that answers without a tool call", async () => {
    const f = await fake([completion({ content: "pong" })]);
    const r = await checkEndpoint({ baseUrl: f.url, model: "fake-model" }, {});
    expect(r.steps[1]?.detail).toMatch(/without a tool call/);
  });
  it("reports a server without tool-call support", async () => {
    const f = await fake([
      apiError(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),
    ]);
    const r = await checkEndpoint({ baseUrl: f.url, model: "fake-model" }, {});
    expect(r.steps[1]?.detail).toMatch(/does not accept tool calls/);
  });
  it("reports a refused key and an unreachable endpoint", async () => {
    const f = await fake([completion({ content: "x" })], apiError(401, "invalid key"));
    const r = await checkEndpoint({ baseUrl: f.url, model: "fake-model" }, {});
    expect(r.ok).toBe(false);
    expect(r.steps[0]?.detail).toMatch(/refused the API key \(HTTP 401\)/);
    const r1 = await checkEndpoint({ baseUrl: "http://127.0.0.1:9/v1", model: "m" }, {});
    expect(r1.steps[0]?.detail).toMatch(/cannot reach/);
  });
});
