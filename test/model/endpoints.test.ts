import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { checkEndpoint } from "../../src/model/check.ts";
import { ClientTimeout, toModelError } from "../../src/model/error-map.ts";
import { ModelError } from "../../src/model/errors.ts";
import { connectLimitMessage } from "../../src/model/http-transport.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { withRetries } from "../../src/model/retry.ts";
import { parseTimeouts } from "../../src/model/timeouts.ts";
import type { ChatRequest, ChatResponse } from "../../src/model/types.ts";
import { type FakeVllmOptions, startFakeVllm } from "../helpers/fake-vllm.ts";
import { startStrictOpenAI } from "../helpers/strict-openai.ts";

/** The client against the strict fakes: reasoning, streaming, timeouts, context-length refusals, models check. */
const tools: ChatRequest["tools"] = [
  {
    type: "function",
    function: {
      name: "ping",
      description: "Answer a check.",
      parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    },
  },
];
const request: ChatRequest = {
  messages: [{ role: "user", content: "Call ping." }],
  tools,
  sampling: { max_tokens: 64, seed: 1 },
};
const noSleep = { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5, sleep: async () => {} };

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});
async function vllm(o: FakeVllmOptions = {}) {
  const f = await startFakeVllm("qwen3", o);
  closers.push(f.close);
  return f;
}
async function openai(o: Parameters<typeof startStrictOpenAI>[0] = {}) {
  const f = await startStrictOpenAI(o);
  closers.push(f.close);
  return f;
}
/** A response without what differs between two calls (latency; the fake numbers its tool-call ids per request). */
const comparable = (r: ChatResponse) => ({
  ...r,
  latency_ms: 0,
  message: { ...r.message, tool_calls: r.message.tool_calls.map((c) => ({ ...c, id: "" })) },
});

describe("reasoning and streaming against a vLLM-like server", () => {
  for (const field of ["reasoning", "reasoning_content"] as const)
    it(`reads ${field} whole and streamed, and both give the same response`, async () => {
      const f = await vllm({ reasoning: field, maxModelLen: 32768 });
      const whole = await new OpenAICompatibleModel({ baseUrl: f.url, model: "qwen3" }, {}).complete(request);
      const streamed = await new OpenAICompatibleModel({ baseUrl: f.url, model: "qwen3", stream: true }, {}).complete(request);
      expect(whole.message.reasoning).toMatch(/next step is ping/);
      expect(whole.message.tool_calls[0]?.function.name).toBe("ping");
      expect(whole.context_window).toBe(32768);
      expect(comparable(streamed)).toEqual(comparable(whole));
      expect(f.requests[1]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      expect(f.refusals).toEqual([]);
    });

  it("follows the harness's sampling.stream unless the model setting says otherwise", async () => {
    const f = await vllm();
    const streamRequest = { ...request, sampling: { ...request.sampling, stream: true } };
    await new OpenAICompatibleModel({ baseUrl: f.url, model: "qwen3" }, {}).complete(streamRequest);
    await new OpenAICompatibleModel({ baseUrl: f.url, model: "qwen3", stream: false }, {}).complete(streamRequest);
    expect(f.requests.map((r) => r.stream ?? false)).toEqual([true, false]);
  });
});

describe("against a strict OpenAI-like server", () => {
  it("a reasoning model, whole and streamed: no refusal, tool calls assembled, reasoning tokens counted", async () => {
    const f = await openai();
    for (const stream of [false, true]) {
      const m = new OpenAICompatibleModel({ baseUrl: f.url, model: "o4-mini", dialect: "openai", stream }, {});
      const r = await m.complete({
        ...request,
        sampling: { ...request.sampling, reasoning_effort: "low", presence_penalty: 0.5 },
      });
      expect(r.message.tool_calls).toEqual([
        { id: expect.stringMatching(/^call_/), type: "function", function: { name: "ping", arguments: '{"word":"pong"}' } },
      ]);
      expect(r.usage.reasoning_tokens).toBe(64);
      expect(r.usage.completion_tokens).toBeGreaterThan(64);
      expect(r.message.reasoning).toBeUndefined();
    }
    expect(f.refusals).toEqual([]);
    expect(f.requests[0]).not.toHaveProperty("presence_penalty");
  });

  it("the vllm dialect against OpenAI is refused, which is what the strict fake is for", async () => {
    const f = await openai();
    const m = new OpenAICompatibleModel({ baseUrl: f.url, model: "o4-mini" }, {});
    const err = await m.complete({ ...request, sampling: { top_k: 20 } }).catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.kind).toBe("bad_request");
    expect(f.refusals[0]?.message).toMatch(/top_k/);
  });
});

describe("context-length refusals", () => {
  const long: ChatRequest = { ...request, messages: [{ role: "user", content: "x".repeat(40_000) }] };
  for (const legacyErrors of [false, true])
    it(`vLLM's 400 (${legacyErrors ? "old" : "current"} wording and error shape) is a context_length fault with window and prompt`, async () => {
      const f = await vllm({ maxModelLen: 2048, legacyErrors });
      const err = await new OpenAICompatibleModel({ baseUrl: f.url, model: "qwen3" }, {}).complete(long).catch((e) => e);
      expect(err.kind).toBe("context_length");
      expect(err.contextWindow).toBe(2048);
      expect(err.promptTokens).toBeGreaterThan(2048);
      expect(err.retryable).toBe(false);
    });
  it("OpenAI's context_length_exceeded", async () => {
    const f = await openai({ contextWindow: 1000 });
    const err = await new OpenAICompatibleModel({ baseUrl: f.url, model: "gpt-4.1-mini", dialect: "openai" }, {})
      .complete(long)
      .catch((e) => e);
    expect(err.kind).toBe("context_length");
    expect(err.contextWindow).toBe(1000);
  });
});

describe("timeouts", () => {
  it("a stream that stalls is an idle-timeout fault, retried", async () => {
    const f = await vllm({ stallFirst: 1 });
    const faults: string[] = [];
    const m = withRetries(
      new OpenAICompatibleModel({ baseUrl: f.url, model: "qwen3", stream: true, timeouts: { idle: 0.3 } }, {}),
      { ...noSleep, onRetry: (r) => faults.push(`${r.error.kind}: ${r.error.message}`) },
    );
    const r = await m.complete(request);
    expect(r.attempts).toBe(2);
    expect(r.faults?.map((x) => x.kind)).toEqual(["timeout"]);
    expect(faults[0]).toMatch(/timeout: .*no token for 0.3 s \(the idle timeout\)/);
  });
  it("a whole answer that never comes is an attempt-timeout fault; the total cap ends the call", async () => {
    const f = await vllm({ stallFirst: 100 });
    const m = withRetries(new OpenAICompatibleModel({ baseUrl: f.url, model: "qwen3", timeouts: { attempt: 0.2 } }, {}), {
      ...noSleep,
      maxAttempts: 50,
      totalMs: 700,
    });
    const err = await m.complete(request).catch((e) => e);
    expect(err.kind).toBe("timeout");
    expect(err.message).toMatch(/total timeout of 0.7 s \(\d+ attempt\(s\)\); last fault: .*attempt timeout of 0.2 s/);
    expect(f.requests.length).toBeGreaterThan(1);
  });
  it("a connect limit reaches the user as a timeout fault with its own words, not the SDK's", () => {
    const words = connectLimitMessage(10_000);
    expect(words).not.toMatch(/timed? ?out/i); // what the SDK looks for before it drops the cause
    const err = toModelError(new OpenAI.APIConnectionError({ cause: new ClientTimeout(words) }), "http://x/v1", "m");
    expect(err.kind).toBe("timeout");
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/connect limit of 10 s/);
  });
  it("--timeouts is NAME=SECONDS for known names only", () => {
    expect(parseTimeouts("idle=1, connect=2.5")).toEqual({ idle: 1, connect: 2.5 });
    expect(() => parseTimeouts("idel=1")).toThrow(/NAME one of connect, first_byte, idle, attempt, total/);
    expect(() => parseTimeouts("idle=0")).toThrow(/above 0/);
  });
});

describe("hone models check", () => {
  it("falls back to tool_choice auto on a vLLM without required, says so, and names the window", async () => {
    const f = await vllm({ noRequiredToolChoice: true, maxModelLen: 8192 });
    const r = await checkEndpoint({ baseUrl: f.url, model: "qwen3" }, {});
    expect(r.ok).toBe(true);
    expect(f.requests.map((b) => b.tool_choice)).toEqual(["required", "auto"]);
    expect(r.steps[0]?.detail).toMatch(/context window of 8192 tokens/);
    expect(r.steps[1]?.detail).toMatch(/tool_choice "required" was refused, so "auto" was used/);
  });
  it("passes against the strict OpenAI fake with a reasoning model", async () => {
    const f = await openai();
    const r = await checkEndpoint({ baseUrl: f.url, model: "o4-mini", dialect: "openai" }, {});
    expect(r.ok).toBe(true);
    expect(f.refusals).toEqual([]);
  });
});
