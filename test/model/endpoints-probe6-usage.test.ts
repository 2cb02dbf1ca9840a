import { afterEach, describe, expect, it } from "vitest";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { addUsage, zeroUsage } from "../../src/model/types.ts";
import { startWireFake, type WireReply } from "./wire-fake.ts";

/**
 * Usage as OpenAI reports it (and vLLM with --enable-prompt-tokens-details): the prompt's tokens served from the
 * prompt cache in `prompt_tokens_details.cached_tokens`, beside the reasoning tokens of `completion_tokens_details`.
 * Both are kept, whole and streamed (usage in the last chunk, `stream_options.include_usage`), and summed.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const USAGE = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  total_tokens: 2306,
  prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 192,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
};

const wholeAnswer: WireReply = (res, body) => {
  const text = JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: body.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: "ok", refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage: USAGE,
    service_tier: "default",
    system_fingerprint: null,
  });
  res.writeHead(200, { "content-type": "application/json" });
  res.end(text);
};

const streamedAnswer: WireReply = (res, body) => {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_700_000_000, model: body.model };
  const chunks = [
    {
      ...base,
      choices: [{ index: 0, delta: { role: "assistant", content: "", refusal: null }, finish_reason: null }],
      usage: null,
    },
    { ...base, choices: [{ index: 0, delta: { content: "ok" }, finish_reason: null }], usage: null },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null },
    { ...base, choices: [], usage: USAGE },
  ];
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end("data: [DONE]\n\n");
};

describe("usage with prompt_tokens_details.cached_tokens", () => {
  for (const stream of [false, true])
    it(`keeps the cached prompt tokens and the reasoning tokens (${stream ? "streamed" : "whole"})`, async () => {
      const f = await startWireFake([stream ? streamedAnswer : wholeAnswer], { flavor: "openai" });
      closers.push(f.close);
      const model = new OpenAICompatibleModel({ baseUrl: f.url, model: "o4-mini", dialect: "openai", stream }, {});
      const res = await model.complete({ messages: [{ role: "user", content: "hi" }] });
      expect(res.message.content).toBe("ok");
      expect(res.usage).toEqual({
        prompt_tokens: 2006,
        completion_tokens: 300,
        total_tokens: 2306,
        reasoning_tokens: 192,
        cached_tokens: 1920,
      });
      expect(f.requests[0]?.stream_options ?? null).toEqual(stream ? { include_usage: true } : null);
    });

  it("is summed over calls, and absent where no server said it", () => {
    const total = zeroUsage();
    addUsage(total, { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 });
    expect(total).not.toHaveProperty("cached_tokens");
    addUsage(total, { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11, cached_tokens: 8 });
    addUsage(total, { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11, cached_tokens: 4 });
    expect(total).toEqual({ prompt_tokens: 30, completion_tokens: 3, total_tokens: 33, cached_tokens: 12 });
  });
});
