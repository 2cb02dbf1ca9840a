import { describe, expect, it } from "vitest";
import { buildRequestBody, wireMessages } from "../../src/model/dialect.ts";
import { isKnownNonReasoningModel, isOpenAIReasoningModel } from "../../src/model/model-family.ts";
import type { ChatMessage, ChatRequest } from "../../src/model/types.ts";
import { checkOpenAIRequest } from "../helpers/openai-rules.ts";

const tools: ChatRequest["tools"] = [
  {
    type: "function",
    function: { name: "ping", description: "p", parameters: { type: "object", properties: { word: { type: "string" } } } },
  },
];
const conversation: ChatMessage[] = [
  { role: "system", content: "s" },
  { role: "user", content: "u" },
  {
    role: "assistant",
    content: null,
    reasoning: "thinking",
    tool_calls: [{ id: "call_1", type: "function", function: { name: "ping", arguments: "{}" } }],
  },
  { role: "tool", tool_call_id: "call_1", content: "pong" },
  { role: "assistant", content: null, reasoning: "done" },
  { role: "user", content: "go on" },
];
const everything: ChatRequest = {
  messages: conversation,
  tools,
  sampling: {
    temperature: 0.7,
    top_p: 0.9,
    top_k: 20,
    max_tokens: 256,
    seed: 7,
    presence_penalty: 0.1,
    frequency_penalty: 0.2,
    repetition_penalty: 1.05,
    chat_template_kwargs: { enable_thinking: true },
    reasoning_effort: "low",
    parallel_tool_calls: false,
  },
};

describe("model families", () => {
  it("knows OpenAI's reasoning models by name, provider prefix or not", () => {
    for (const m of ["o1", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini", "gpt-5.1", "openai/o3"])
      expect(isOpenAIReasoningModel(m), m).toBe(true);
    for (const m of ["gpt-4o", "gpt-4.1-mini", "gpt-5-chat-latest", "omni-x", "Qwen/Qwen3-8B", "deepseek-reasoner"])
      expect(isOpenAIReasoningModel(m), m).toBe(false);
    expect(isKnownNonReasoningModel("gpt-4o-mini")).toBe(true);
    expect(isKnownNonReasoningModel("gpt-5-chat-latest")).toBe(true);
    expect(isKnownNonReasoningModel("deepseek-reasoner")).toBe(false);
  });
});

describe("the openai dialect sends only what the model accepts", () => {
  it("to a reasoning model: no penalties, seed, temperature, top_p or vLLM fields; reasoning_effort, max_completion_tokens", () => {
    const body = buildRequestBody(everything, { dialect: "openai", model: "o4-mini" });
    expect(body).toMatchObject({
      max_completion_tokens: 256,
      reasoning_effort: "low",
      tool_choice: "auto",
    });
    for (const k of [
      "parallel_tool_calls",
      "seed",
      "presence_penalty",
      "frequency_penalty",
      "temperature",
      "top_p",
      "top_k",
      "max_tokens",
      "chat_template_kwargs",
      "repetition_penalty",
    ])
      expect(body, k).not.toHaveProperty(k);
    expect(checkOpenAIRequest(body)).toBeUndefined();
  });
  it("sends penalties and seed to a reasoning model only when asked (keepSampling), and the strict rules refuse that", () => {
    const body = buildRequestBody(everything, { dialect: "openai", model: "o4-mini", keepSampling: true });
    expect(body).toMatchObject({ seed: 7, presence_penalty: 0.1, temperature: 0.7 });
    expect(checkOpenAIRequest(body)?.code).toBe("unsupported_parameter");
  });
  it("to a chat model: seed and penalties, no reasoning_effort, and the body passes OpenAI's rules", () => {
    const body = buildRequestBody(everything, { dialect: "openai", model: "gpt-4.1-mini" });
    expect(body).toMatchObject({ seed: 7, presence_penalty: 0.1, frequency_penalty: 0.2, max_completion_tokens: 256 });
    expect(body).not.toHaveProperty("reasoning_effort");
    expect(checkOpenAIRequest(body)).toBeUndefined();
  });
  it("sends reasoning_effort to a model it does not know (deepseek-reasoner, grok…)", () => {
    expect(buildRequestBody(everything, { dialect: "openai", model: "deepseek-reasoner" }).reasoning_effort).toBe("low");
  });
  it("never sends parallel_tool_calls or tool_choice without tools", () => {
    const body = buildRequestBody({ ...everything, tools: undefined }, { dialect: "openai", model: "o4-mini" });
    expect(body).not.toHaveProperty("parallel_tool_calls");
    expect(body).not.toHaveProperty("tool_choice");
    expect(checkOpenAIRequest(body)).toBeUndefined();
  });
  it("asks for a stream with usage in the last chunk", () => {
    const body = buildRequestBody(everything, { dialect: "openai", model: "o4-mini", stream: true });
    expect(body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(checkOpenAIRequest(body)).toBeUndefined();
    expect(buildRequestBody(everything, { dialect: "openai", model: "o4-mini" })).not.toHaveProperty("stream_options");
  });
});

describe("the vllm dialect keeps its extras", () => {
  it("sends every sampling field, reasoning_effort and parallel_tool_calls, and max_tokens", () => {
    const body = buildRequestBody(everything, { dialect: "vllm", model: "Qwen/Qwen3-8B" });
    expect(body).toMatchObject({
      seed: 7,
      presence_penalty: 0.1,
      temperature: 0.7,
      top_p: 0.9,
      top_k: 20,
      max_tokens: 256,
      repetition_penalty: 1.05,
      chat_template_kwargs: { enable_thinking: true },
      reasoning_effort: "low",
      parallel_tool_calls: false,
    });
    expect(body).not.toHaveProperty("max_completion_tokens");
  });
  it("keeps the key order of requests that use no new field, so their cache keys do not move", () => {
    const old: ChatRequest = {
      messages: [{ role: "user", content: "u" }],
      tools,
      sampling: { temperature: 0.5, seed: 1, max_tokens: 64, top_k: 5 },
    };
    expect(Object.keys(buildRequestBody(old, { dialect: "vllm", model: "m" }))).toEqual([
      "model",
      "messages",
      "tools",
      "tool_choice",
      "seed",
      "temperature",
      "max_tokens",
      "top_k",
    ]);
  });
});

describe("messages sent back are valid", () => {
  it("gives an assistant message without tool calls string content, in both dialects", () => {
    for (const dialect of ["openai", "vllm"] as const) {
      const sent = wireMessages(conversation, dialect);
      expect(sent[4]).toMatchObject({ role: "assistant", content: "" });
      expect(sent[2]).toMatchObject({ content: null });
    }
  });
  it("sends reasoning back as `reasoning` to vLLM and never to OpenAI, which refuses unknown message fields", () => {
    expect(wireMessages(conversation, "vllm")[2]).toHaveProperty("reasoning", "thinking");
    const openai = wireMessages(conversation, "openai");
    expect(openai.some((m) => "reasoning" in m)).toBe(false);
    const withReasoning = buildRequestBody({ messages: conversation, tools }, { dialect: "vllm", model: "o4-mini" });
    expect(checkOpenAIRequest(withReasoning)?.message).toMatch(/'reasoning' was unexpected/);
    expect(
      checkOpenAIRequest(buildRequestBody({ messages: conversation, tools }, { dialect: "openai", model: "o4-mini" })),
    ).toBeUndefined();
  });
  it("leaves a conversation that needs nothing as the same array (no copy per call)", () => {
    const plain: ChatMessage[] = [{ role: "user", content: "u" }];
    expect(wireMessages(plain, "openai")).toBe(plain);
  });
});

describe("past tool calls whose arguments vLLM could not render", () => {
  const call = (id: string, args: string) => ({ id, type: "function" as const, function: { name: "ping", arguments: args } });
  const history: ChatMessage[] = [
    { role: "user", content: "u" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        call("a", '{"x": "abc'),
        call("b", '{"word":"pong"}'),
        call("c", "[1]"),
        call("d", ""),
        call("e", '{"a": NaN}'),
        call("f", "{'x': 1}"),
      ],
      reasoning: "r",
    },
    { role: "tool", tool_call_id: "a", content: "error" },
  ];
  it('go to vLLM as "{}" where Python would not read a mapping; mappings and empty arguments as written; the history unchanged', () => {
    const before = JSON.stringify(history);
    const sent = wireMessages(history, "vllm")[1] as Extract<ChatMessage, { role: "assistant" }>;
    expect(sent.tool_calls?.map((c) => c.function.arguments)).toEqual(["{}", '{"word":"pong"}', "{}", "", '{"a": NaN}', "{}"]);
    expect(Object.keys(sent)).toEqual(["role", "content", "tool_calls", "reasoning"]);
    expect(JSON.stringify(history)).toBe(before);
  });
  it("go to OpenAI as the model wrote them (it takes any string)", () => {
    const sent = wireMessages(history, "openai")[1] as Extract<ChatMessage, { role: "assistant" }>;
    expect(sent.tool_calls?.map((c) => c.function.arguments)).toEqual([
      '{"x": "abc',
      '{"word":"pong"}',
      "[1]",
      "",
      '{"a": NaN}',
      "{'x': 1}",
    ]);
  });
  it("leave a history of well-formed calls as the same array", () => {
    const fine: ChatMessage[] = [{ role: "assistant", content: null, tool_calls: [call("b", '{"word":"pong"}')] }];
    expect(wireMessages(fine, "vllm")).toBe(fine);
  });
});
