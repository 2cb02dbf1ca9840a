import { afterEach, describe, expect, it } from "vitest";
import { buildRequestBody } from "../../src/model/dialect.ts";
import { refusesParallelToolCalls } from "../../src/model/model-family.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import type { ChatRequest } from "../../src/model/types.ts";
import { checkOpenAIRequest } from "../helpers/openai-rules.ts";
import { startStrictOpenAI } from "../helpers/strict-openai.ts";

/**
 * `llm_config.parallel_tool_calls` against OpenAI's own models: the o-series answer every request that carries it
 * with 400 "Unsupported parameter: 'parallel_tool_calls' is not supported with this model." (code
 * unsupported_parameter; o1, o3-mini, o3, o4-mini), so a harness that sets it could run no rollout on them; the
 * gpt-5 family and the chat models take it.
 */
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
  sampling: { max_tokens: 64, parallel_tool_calls: false },
};

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

describe("parallel_tool_calls in the openai dialect", () => {
  it("is never sent to the o-series, which refuse it; the call is answered (whole and streamed)", async () => {
    const f = await startStrictOpenAI({ models: ["o4-mini", "o3", "o1"] });
    closers.push(f.close);
    for (const model of ["o4-mini", "o3", "o1"])
      for (const stream of [false, true]) {
        const m = new OpenAICompatibleModel({ baseUrl: f.url, model, dialect: "openai", stream }, {});
        const r = await m.complete(request);
        expect(r.message.tool_calls[0]?.function.name).toBe("ping");
      }
    expect(f.refusals).toEqual([]);
    for (const body of f.requests) expect(body).not.toHaveProperty("parallel_tool_calls");
  });

  it("is sent to gpt-5 and the chat models, which take it", () => {
    for (const model of ["gpt-5", "gpt-5-mini", "gpt-5.1", "gpt-4.1-mini", "gpt-4o"]) {
      const body = buildRequestBody(request, { dialect: "openai", model });
      expect(body.parallel_tool_calls, model).toBe(false);
      expect(checkOpenAIRequest(body), model).toBeUndefined();
    }
  });

  it("still goes to vLLM whatever the model's name", () => {
    expect(buildRequestBody(request, { dialect: "vllm", model: "o4-mini" }).parallel_tool_calls).toBe(false);
  });

  it("knows the o-series by name, with a provider prefix or a date", () => {
    for (const m of ["o1", "o3-mini", "o3", "o4-mini-2025-04-16", "openai/o4-mini", "O3"])
      expect(refusesParallelToolCalls(m), m).toBe(true);
    for (const m of ["gpt-5", "gpt-5-mini", "gpt-4.1", "omni-x", "o", "Qwen/Qwen3-8B"])
      expect(refusesParallelToolCalls(m), m).toBe(false);
  });

  it("the strict rules refuse it from the o-series as OpenAI words it", () => {
    const refusal = checkOpenAIRequest({
      model: "o4-mini",
      messages: [{ role: "user", content: "x" }],
      tools,
      parallel_tool_calls: false,
    });
    expect(refusal).toMatchObject({
      message: "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
      param: "parallel_tool_calls",
      code: "unsupported_parameter",
    });
  });
});
