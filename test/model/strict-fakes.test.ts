import { describe, expect, it } from "vitest";
import { checkOpenAIRequest } from "../helpers/openai-rules.ts";

/** The strict OpenAI rules refuse what OpenAI refuses: each case is a request the real API answers with a 400. */
const tools = [{ type: "function", function: { name: "ping", parameters: { type: "object", properties: {} } } }];
const call = { id: "call_a", type: "function", function: { name: "ping", arguments: "{}" } };
const ok = { model: "gpt-4.1-mini", messages: [{ role: "user", content: "hi" }], tools };

describe("the strict OpenAI rules", () => {
  it("accept a plain tool-calling conversation", () => {
    expect(
      checkOpenAIRequest({
        ...ok,
        messages: [
          { role: "system", content: "s" },
          { role: "user", content: "u" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: "call_a", content: "pong" },
          { role: "assistant", content: "" },
        ],
      }),
    ).toBeUndefined();
  });
  const refused: [string, Record<string, unknown>, RegExp][] = [
    [
      "null content without tool calls",
      {
        ...ok,
        messages: [
          { role: "user", content: "u" },
          { role: "assistant", content: null },
        ],
      },
      /expected a string, got null/,
    ],
    ["an unknown top-level field", { ...ok, top_k: 20 }, /Unrecognized request argument supplied: top_k/],
    [
      "penalties for a reasoning model",
      { ...ok, model: "o4-mini", presence_penalty: 0.1 },
      /'presence_penalty' is not supported/,
    ],
    ["seed for a reasoning model", { ...ok, model: "gpt-5-mini", seed: 1 }, /'seed' is not supported/],
    ["max_tokens for a reasoning model", { ...ok, model: "o3", max_tokens: 10 }, /Use 'max_completion_tokens'/],
    ["a temperature for a reasoning model", { ...ok, model: "o4-mini", temperature: 0.2 }, /Only the default \(1\)/],
    ["reasoning_effort for a chat model", { ...ok, reasoning_effort: "low" }, /reasoning_effort/],
    [
      "a tool result for no call",
      {
        ...ok,
        messages: [
          { role: "user", content: "u" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: "call_b", content: "x" },
        ],
      },
      /'call_b' not found/,
    ],
    [
      "a tool result after no call",
      {
        ...ok,
        messages: [
          { role: "user", content: "u" },
          { role: "tool", tool_call_id: "call_a", content: "x" },
        ],
      },
      /must be a response to a preceeding message/,
    ],
    [
      "a call left without its result",
      {
        ...ok,
        messages: [
          { role: "user", content: "u" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "user", content: "?" },
        ],
      },
      /did not have response messages: call_a/,
    ],
    [
      "an unknown message field",
      { ...ok, messages: [{ role: "assistant", content: "x", reasoning: "r" }] },
      /'reasoning' was unexpected/,
    ],
    [
      "a tool without a valid schema",
      { ...ok, tools: [{ type: "function", function: { name: "ping", parameters: { type: "string" } } }] },
      /Invalid schema for function 'ping'/,
    ],
    [
      "a tool schema JSON Schema itself refuses",
      { ...ok, tools: [{ type: "function", function: { name: "ping", parameters: { type: "object", required: "x" } } }] },
      /Invalid schema/,
    ],
    [
      "a tool name with spaces",
      { ...ok, tools: [{ type: "function", function: { name: "my tool" } }] },
      /does not match pattern/,
    ],
    [
      "tool_choice without tools",
      { model: "gpt-4.1-mini", messages: ok.messages, tool_choice: "auto" },
      /only allowed when 'tools'/,
    ],
    [
      "parallel_tool_calls without tools",
      { model: "gpt-4.1-mini", messages: ok.messages, parallel_tool_calls: true },
      /only allowed when 'tools'/,
    ],
    [
      "stream_options without stream",
      { ...ok, stream_options: { include_usage: true } },
      /only allowed when 'stream' is enabled/,
    ],
    ["an empty tool_calls list", { ...ok, messages: [{ role: "assistant", content: "x", tool_calls: [] }] }, /empty array/],
    [
      "a call without an id",
      { ...ok, messages: [{ role: "assistant", content: null, tool_calls: [{ ...call, id: "" }] }] },
      /tool_calls\[0\]/,
    ],
    ["an unknown role", { ...ok, messages: [{ role: "function", content: "x" }] }, /Supported values are/],
  ];
  for (const [what, body, message] of refused)
    it(`refuse ${what}`, () => {
      const r = checkOpenAIRequest(body);
      expect(r?.status).toBe(400);
      expect(r?.message).toMatch(message);
    });
});
