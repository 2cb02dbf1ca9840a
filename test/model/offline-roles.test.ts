import { describe, expect, it } from "vitest";
import { offlineCalls } from "../../src/model/offline/bfcl-role.ts";
import { offlineProgram } from "../../src/model/offline/coder-role.ts";
import { offlineReply } from "../../src/model/offline/policy.ts";
import "../../src/model/offline/roles.ts";
import { firstPerson, instructionSentences } from "../../src/model/offline/user-role.ts";
import type { ChatMessage, ChatRequest, ToolDefinition } from "../../src/model/types.ts";
import { userSystemPrompt } from "../../src/runtime/conversation.ts";

const tool = (name: string): ToolDefinition => ({
  type: "function",
  function: { name, description: name, parameters: { type: "object" } },
});
const ask = (messages: ChatMessage[], tools: string[], seed = 1): ChatRequest => ({
  messages,
  tools: tools.map(tool),
  sampling: { seed },
});

describe("the offline model as τ-bench's simulated user", () => {
  const system = userSystemPrompt("You are Yusuf Rossi in 19122. You want to return your order #W1. You are polite.");
  it("says the instruction a sentence a turn in the first person, then the stop token", () => {
    const m: ChatMessage[] = [
      { role: "system", content: system },
      { role: "user", content: "Hi! How can I help you today?" },
    ];
    const said: string[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const r = offlineReply(ask(m, []));
      said.push(r.content ?? "");
      m.push({ role: "assistant", content: r.content ?? "" }, { role: "user", content: "ok" });
    }
    expect(said).toEqual([
      "I am Yusuf Rossi in 19122.",
      "I want to return my order #W1.",
      "I am polite.",
      "###STOP###",
      "###STOP###",
    ]);
    expect(instructionSentences(system)).toHaveLength(3);
    expect(firstPerson("Your order, you said")).toBe("My order, me said");
  });
});

describe("the offline model as the tool agent", () => {
  const sys: ChatMessage = { role: "system", content: "help\n\nhone-hint: agent=tool-agent" };
  const tools = ["find_user_id_by_name_zip", "get_user_details", "get_order_details", "transfer_to_human_agents"];
  it("looks identifiers up by their shape, once each, then answers with what it found; the same way every time", () => {
    const m: ChatMessage[] = [sys, { role: "user", content: "I am Yusuf Rossi in 19122. My order is #W2378156." }];
    const first = offlineReply(ask(m, tools));
    expect(first.tool_calls[0]?.function).toEqual({
      name: "find_user_id_by_name_zip",
      arguments: '{"first_name":"Yusuf","last_name":"Rossi","zip":"19122"}',
    });
    expect(offlineReply(ask(m, tools))).toEqual(first);
    m.push(
      { role: "assistant", content: null, tool_calls: first.tool_calls },
      { role: "tool", tool_call_id: first.tool_calls[0]!.id, content: "yusuf_rossi_9620" },
    );
    expect(offlineReply(ask(m, tools)).tool_calls[0]?.function.name).toBe("get_user_details");
    expect(offlineReply(ask(m, ["transfer_to_human_agents"])).content).toMatch(/^Here is what I found: yusuf_rossi_9620/);
  });
  it("leaves the oracle's requests to the oracle", () => {
    const r = offlineReply(ask([sys, { role: "user", content: "hi" }], [...tools, "oracle_answer"]));
    expect(r.tool_calls[0]?.function.name).toBe("oracle_answer");
  });
});

describe("the offline model on code and function-call answers", () => {
  it("submits a function returning a fixed guess: HumanEval's body, MBPP's whole function", () => {
    const prompt = "from typing import List\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n";
    expect(offlineProgram(prompt, "first_arg")).toBe("    return numbers\n");
    expect(offlineProgram(prompt, "none")).toBe("    return None\n");
    expect(offlineProgram("Write it.\nassert set(similar_elements((3, 4),(4,))) == set((4,))", "first_arg")).toBe(
      "def similar_elements(*args):\n    return args[0] if args else None\n",
    );
    const q = `${prompt}\n\nGive your final answer as Python code that completes the function above.`;
    const r = offlineReply(ask([{ role: "user", content: q }], ["final_answer"]));
    expect(JSON.parse(r.tool_calls[0]!.function.arguments)).toEqual({ answer: "    return numbers\n" });
  });
  it("calls BFCL's first function with its required parameters filled by type", () => {
    const fns = [
      {
        name: "calc_area",
        parameters: {
          type: "dict",
          properties: { base: { type: "integer" }, unit: { type: "string" }, exact: { type: "boolean" } },
          required: ["base", "unit"],
        },
      },
    ];
    const q = `Find the area of a triangle with base 10 in 'cm'.\n\nFunctions you can call (JSON Schema):\n${JSON.stringify(fns)}`;
    expect(offlineCalls(q)).toBe('[{"calc_area":{"base":10,"unit":"cm"}}]');
    const r = offlineReply(ask([{ role: "user", content: q }], ["final_answer"]));
    expect(JSON.parse(r.tool_calls[0]!.function.arguments).answer).toBe(offlineCalls(q));
  });
});
