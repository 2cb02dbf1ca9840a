import { afterEach, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES, MAX_EVENT_BYTES } from "../../src/model/body-limit.ts";
import { ModelError } from "../../src/model/errors.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { backoffDelay, defaultRetryPolicy, withRetries } from "../../src/model/retry.ts";
import { retryAfterMs } from "../../src/model/retry-after.ts";
import { EventStreamWatch } from "../../src/model/sse-watch.ts";
import type { ChatMessage, ChatRequest } from "../../src/model/types.ts";
import { endless, errorReply, type Flavor, type Said, startWireFake, streamed, type WireReply, whole } from "./wire-fake.ts";

/** The client against servers that misbehave the way real ones (and the proxies before them) do. */
const tools: ChatRequest["tools"] = [
  {
    type: "function",
    function: { name: "view", description: "v", parameters: { type: "object", properties: { x: { type: "string" } } } },
  },
];
const request: ChatRequest = { messages: [{ role: "user", content: "go" }], tools, sampling: { max_tokens: 64 } };
const retries = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, sleep: async () => {} };

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});
async function fake(script: WireReply[], flavor: Flavor = "vllm", models?: WireReply) {
  const f = await startWireFake(script, { flavor, models });
  closers.push(f.close);
  return f;
}
const client = (url: string, o: Partial<ConstructorParameters<typeof OpenAICompatibleModel>[0]> = {}) =>
  new OpenAICompatibleModel({ baseUrl: url, model: "m", ...o }, {});

describe("a tool call the model cut short stays in the history without ending the run", () => {
  const cut: Said = {
    tool_calls: [{ id: "chatcmpl-tool-1", name: "view", arguments: '{"x": "abc' }],
    finish_reason: "length",
  };
  const next: Said = { content: "done", finish_reason: "stop" };
  for (const stream of [false, true])
    it(`vLLM gets "{}" for it, the conversation keeps what the model wrote (${stream ? "streamed" : "whole"})`, async () => {
      const reply = stream ? streamed : whole;
      const f = await fake([reply(cut), reply(next)]);
      const m = withRetries(client(f.url, { stream }), retries);
      const first = await m.complete(request);
      expect(first.finish_reason).toBe("length");
      const history: ChatMessage[] = [
        ...request.messages,
        { role: "assistant", content: null, tool_calls: first.message.tool_calls },
        { role: "tool", tool_call_id: "chatcmpl-tool-1", content: "error: the arguments are not valid JSON" },
      ];
      const second = await m.complete({ ...request, messages: history });
      expect(second.message.content).toBe("done");
      expect(f.refusals).toEqual([]);
      const sent = (f.requests[1]?.messages as ChatMessage[] | undefined)?.[1];
      expect(sent).toMatchObject({ tool_calls: [{ id: "chatcmpl-tool-1", function: { name: "view", arguments: "{}" } }] });
      expect(history[1]).toMatchObject({ tool_calls: [{ function: { arguments: '{"x": "abc' } }] });
    });
});

describe("a stream that stops without its end", () => {
  const answer: Said = { content: "partial answer that was cut", finish_reason: "stop" };
  it("is a dropped connection: retried, then a clear failure naming the URL", async () => {
    const f = await fake([streamed(answer, "cut")]);
    const err = await withRetries(client(f.url, { stream: true }), retries)
      .complete(request)
      .catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.kind).toBe("unreachable");
    expect(err.message).toContain(`${f.url}/chat/completions`);
    expect(err.message).toMatch(/no finish_reason, no \[DONE\].*gave up after 3 attempts/);
    expect(f.requests).toHaveLength(3);
  });
  it("is retried, and the next whole stream is the answer", async () => {
    const f = await fake([streamed(answer, "cut"), streamed(answer)]);
    const r = await withRetries(client(f.url, { stream: true }), retries).complete(request);
    expect(r).toMatchObject({ attempts: 2, finish_reason: "stop", message: { content: answer.content } });
    expect(r.faults?.[0]?.kind).toBe("unreachable");
  });
  it("ends with a finish reason alone, or with [DONE] alone (CRLF lines too)", async () => {
    const f = await fake([streamed(answer, "no-done"), streamed(answer, "done-only", "\r\n")]);
    const m = client(f.url, { stream: true });
    expect((await m.complete(request)).message.content).toBe(answer.content);
    expect((await m.complete(request)).message.content).toBe(answer.content);
  });
});

describe("the event-stream watch", () => {
  const feed = (watch: EventStreamWatch, text: string, size: number) => {
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; at += size) watch.feed(bytes.subarray(at, at + size));
    return watch;
  };
  it("sees [DONE] however the line is split and broken (LF, CRLF, CR, no space)", () => {
    for (const eol of ["\n", "\r\n", "\r"])
      for (const done of ["data: [DONE]", "data:[DONE]"])
        for (const size of [1, 3, 100])
          expect(feed(new EventStreamWatch(), `data: {}${eol}${eol}${done}${eol}${eol}`, size).done).toBe(true);
    expect(feed(new EventStreamWatch(), 'data: {"content":"data: [DONE]"}\n\n', 4).done).toBe(false);
    expect(feed(new EventStreamWatch(), "data: {}\n\n", 4).done).toBe(false);
  });
  it("counts an event up to its blank line only, so a long stream of events passes", () => {
    const watch = new EventStreamWatch(64);
    for (let i = 0; i < 1000; i++) feed(watch, `data: {"i":${i}}\r\n\r\n`, 7);
    expect(() => feed(watch, `data: ${"x".repeat(40)}\r\ndata: ${"x".repeat(40)}\r\n`, 7)).toThrow(
      /event-stream event passed the limit/,
    );
  });
});

describe("bodies are capped", () => {
  const limit = `limit of ${MAX_BODY_BYTES / (1024 * 1024)} MB`;
  it("an endless whole answer fails with the URL and the limit, and is not held", async () => {
    const f = await fake([endless()]);
    const err = await client(f.url)
      .complete(request)
      .catch((e) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err.kind).toBe("bad_response");
    expect(err.message).toContain(`${f.url}/chat/completions sent too much`);
    expect(err.message).toContain(limit);
  });
  it("an endless error body too", async () => {
    const f = await fake([endless({ status: 500 })]);
    const err = await client(f.url)
      .complete(request)
      .catch((e) => e);
    expect(err.kind).toBe("bad_response");
    expect(err.message).toContain(limit);
  });
  it("an endless model list", async () => {
    const f = await fake([whole({ content: "x", finish_reason: "stop" })], "vllm", endless());
    const err = await client(f.url)
      .listModels()
      .catch((e) => e);
    expect(err.kind).toBe("bad_response");
    expect(err.message).toContain(`${f.url}/models sent too much`);
  });
  for (const lines of [false, true])
    it(`an event-stream event that never ends (${lines ? "endless lines" : "one endless line"})`, async () => {
      const f = await fake([endless({ eventStream: true, lines })]);
      const err = await client(f.url, { stream: true })
        .complete(request)
        .catch((e) => e);
      expect(err.kind).toBe("bad_response");
      expect(err.message).toContain(`${f.url}/chat/completions sent too much: the response event-stream event`);
      expect(err.message).toContain(`limit of ${MAX_EVENT_BYTES / (1024 * 1024)} MB`);
    });
});

const ok429 = whole({ content: "ok", finish_reason: "stop" });

describe("retry headers", () => {
  const ok = whole({ content: "ok", finish_reason: "stop" });
  const delays = async (headers: Record<string, string>) => {
    const f = await fake([errorReply(429, "Rate limit reached for requests", headers), ok]);
    const waited: number[] = [];
    const m = withRetries(client(f.url, { dialect: "openai" }), {
      maxAttempts: 3,
      baseDelayMs: 1,
      maxDelayMs: 20_000,
      maxServerDelayMs: 60_000,
      totalMs: 600_000,
      random: () => 0,
      sleep: async (ms) => {
        waited.push(ms);
      },
    });
    await m.complete(request);
    return waited;
  };
  it("retry-after-ms is read first, as the OpenAI SDK reads it", async () => {
    expect(await delays({ "retry-after-ms": "3000", "retry-after": "1" })).toEqual([3000]);
  });
  it("a Retry-After longer than the backoff's cap is honoured up to the server cap", async () => {
    expect(await delays({ "retry-after": "45" })).toEqual([45_000]);
    expect(await delays({ "retry-after": "3600" })).toEqual([60_000]);
  });
  it("but never past the call's total budget", async () => {
    const f = await fake([errorReply(429, "Rate limit reached", { "retry-after": "45" }), ok]);
    const m = withRetries(client(f.url), { ...retries, maxServerDelayMs: 60_000, totalMs: 2_000 });
    const err = await m.complete(request).catch((e) => e);
    expect(err.kind).toBe("timeout");
    expect(err.message).toMatch(/total timeout of 2 s/);
  });
});

describe("a server's wait, cut short", () => {
  it("ends when the caller's signal aborts (the rollout's deadline), not a minute later", async () => {
    const f = await fake([errorReply(429, "Rate limit reached", { "retry-after": "60" }), ok429]);
    const m = withRetries(client(f.url), { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, maxServerDelayMs: 60_000 });
    const deadline = AbortSignal.timeout(300);
    const err = await m.complete(request, deadline).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(f.requests).toHaveLength(1);
  }, 15_000); // a wait that ignored the signal would hold the call the whole 60 s
});

describe("how long a server asks to wait", () => {
  it("reads retry-after-ms before Retry-After, in a Headers or a plain record", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "1500.5", "retry-after": "9" }))).toBe(1500.5);
    expect(retryAfterMs({ "retry-after": "2" })).toBe(2000);
    expect(retryAfterMs({ "retry-after-ms": "soon", "retry-after": "2" })).toBe(2000);
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });
  it("is honoured past the backoff's cap, up to the server cap", () => {
    const p = { ...defaultRetryPolicy, random: () => 0 };
    expect(backoffDelay(1, p, 45_000)).toBe(45_000);
    expect(backoffDelay(1, p, 3_600_000)).toBe(60_000);
    expect(backoffDelay(1, { ...p, maxServerDelayMs: undefined }, 45_000)).toBe(20_000);
  });
});

describe("smaller protocol points", () => {
  const refusal = "I'm sorry, I can't help with that.";
  for (const stream of [false, true])
    it(`an OpenAI refusal is recorded and shown (${stream ? "streamed" : "whole"})`, async () => {
      const said: Said = { content: null, refusal, finish_reason: "stop" };
      const f = await fake([stream ? streamed(said) : whole(said)], "openai");
      const r = await client(f.url, { dialect: "openai", stream }).complete(request);
      expect(r.message).toMatchObject({ refusal, content: refusal, tool_calls: [] });
    });
  for (const stream of [false, true])
    it(`vLLM's finish_reason "abort" is a server failure, retried (${stream ? "streamed" : "whole"})`, async () => {
      const reply = stream ? streamed : whole;
      const f = await fake([
        reply({ content: "half an ans", finish_reason: "abort" }),
        reply({ content: "ok", finish_reason: "stop" }),
      ]);
      const r = await withRetries(client(f.url, { stream }), retries).complete(request);
      expect(r.attempts).toBe(2);
      expect(r.faults?.[0]).toMatchObject({ kind: "server_error", message: expect.stringMatching(/finish_reason "abort"/) });
    });
  it("an error message says the status once", async () => {
    const f = await fake([errorReply(400, "Expecting value: line 1 column 1 (char 0)")]);
    const err = await client(f.url)
      .complete(request)
      .catch((e) => e);
    expect(err.message).toBe(
      `${f.url}/chat/completions rejected the request (HTTP 400): Expecting value: line 1 column 1 (char 0)`,
    );
  });
  it("an OpenAI reasoning model refusing the vllm dialect's parameters says to use --dialect openai", async () => {
    const message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
    const f = await fake([errorReply(400, message, {}, "unsupported_parameter")], "openai");
    const err = await client(f.url, { model: "gpt-5" })
      .complete(request)
      .catch((e) => e);
    expect(err.kind).toBe("bad_request");
    expect(err.message).toMatch(/instead\. "gpt-5" is an OpenAI reasoning model.*: use --dialect openai\.$/);
    const chat = await client(f.url, { model: "gpt-4.1-mini" })
      .complete(request)
      .catch((e) => e);
    expect(chat.message).not.toMatch(/--dialect/);
  });
});
