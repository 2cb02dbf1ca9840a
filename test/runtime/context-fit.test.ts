import { describe, expect, it } from "vitest";
import { builtinMiddlewareParams } from "../../src/harness/middleware-params.ts";
import { wireMessages } from "../../src/model/dialect.ts";
import { ModelError } from "../../src/model/errors.ts";
import type { ChatMessage, ChatResponse } from "../../src/model/types.ts";
import { charsOf, compact, digest } from "../../src/runtime/context-fit.ts";
import { ContextKeeper } from "../../src/runtime/context-keeper.ts";
import { checkOpenAIRequest } from "../helpers/openai-rules.ts";

const params = builtinMiddlewareParams.context_budget.parse({});
const program = `Current program (40 lines; editable region: lines 3-30):\n\n${"x = 1.0  # a line of the program\n".repeat(90)}`;
const evaluation = JSON.stringify(
  { valid: true, score: 0.91, metric: "sum_radii", improved: true, feedback: "f".repeat(600), evaluations_left: 3 },
  null,
  1,
);

/** system, task, then `turns` rounds of view → edit → evaluate, each assistant message with some reasoning. */
function conversation(turns: number): ChatMessage[] {
  const out: ChatMessage[] = [
    { role: "system", content: "You improve programs." },
    { role: "user", content: "# Task\n\nPack circles." },
  ];
  let n = 0;
  const step = (name: string, args: string, result: string) => {
    const id = `call_${++n}`;
    out.push({
      role: "assistant",
      content: null,
      reasoning: `thinking about ${name} `.repeat(20),
      tool_calls: [{ id, type: "function", function: { name, arguments: args } }],
    });
    out.push({ role: "tool", tool_call_id: id, content: result });
  };
  for (let i = 0; i < turns; i++) {
    step("view_program", "{}", program);
    step("edit_program", JSON.stringify({ block: "y = 2.0\n".repeat(60) }), "Edit applied.");
    step("evaluate_program", "{}", evaluation);
  }
  return out;
}
const opts = (targetTokens: number, over: Partial<Parameters<typeof compact>[1]> = {}) => ({
  params,
  tokensPerChar: 0.25,
  extraChars: 0,
  targetTokens,
  aggressive: false,
  ...over,
});
const tokens = (ms: ChatMessage[]) => Math.ceil(charsOf(ms) * 0.25);
const validForOpenAI = (messages: ChatMessage[]) =>
  checkOpenAIRequest({
    model: "gpt-4.1-mini",
    messages: wireMessages(messages, "openai"),
    tools: [{ type: "function", function: { name: "view_program", parameters: { type: "object" } } }],
  });

describe("compaction of a conversation (hone:context_budget)", () => {
  it("first shrinks old outputs and drops old reasoning, oldest first, and never touches the recent turns", () => {
    const before = conversation(4);
    const c = compact(before, opts(tokens(before) - 500));
    expect(c).toBeDefined();
    expect(c?.turnsDropped).toBe(0);
    expect(c?.outputsCompacted).toBeGreaterThan(0);
    expect(c?.tokensAfter).toBeLessThanOrEqual(tokens(before) - 500);
    expect(c?.messages.slice(-6)).toEqual(before.slice(-6));
    const firstView = c?.messages[3];
    expect(firstView?.content).toMatch(
      /^Current program \(40 lines; editable region: lines 3-30\):\n\[context_budget: \d+ characters summarised/,
    );
    expect(c?.messages[2]).not.toHaveProperty("reasoning");
    expect(validForOpenAI(c?.messages ?? [])).toBeUndefined();
  });

  it("keeps a JSON output JSON: its scalar fields survive", () => {
    const d = JSON.parse(digest(evaluation, 400));
    expect(d).toMatchObject({ valid: true, score: 0.91, improved: true, evaluations_left: 3 });
    expect(d).not.toHaveProperty("feedback");
    expect(d.context_budget).toMatch(/scalar fields kept from \d+ characters/);
  });

  it("then drops whole old turns, notes it on the task message, and every tool result still follows its call", () => {
    const before = conversation(6);
    const c = compact(before, opts(2500));
    expect(c?.turnsDropped).toBeGreaterThan(0);
    expect(c?.messages[1]?.content).toMatch(/\[context_budget: \d+ earlier turns removed to fit the model's context window\]$/);
    expect(c?.messages[2]?.role).toBe("assistant");
    expect(validForOpenAI(c?.messages ?? [])).toBeUndefined();
    // Compacting again adds to the count instead of writing a second note, and leaves compacted outputs alone.
    const again = compact(c?.messages ?? [], opts(1000));
    const notes = again?.messages[1]?.content?.match(/context_budget: (\d+) earlier/g) ?? [];
    expect(notes).toHaveLength(1);
    expect(Number(/(\d+) earlier/.exec(notes[0] ?? "")?.[1])).toBe((c?.turnsDropped ?? 0) + (again?.turnsDropped ?? 0));
    expect(validForOpenAI(again?.messages ?? [])).toBeUndefined();
  });

  it("after a refusal, protects only the last turn and shrinks even its output", () => {
    const before = conversation(2);
    before.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "big", type: "function", function: { name: "view_program", arguments: "{}" } }],
    });
    before.push({ role: "tool", tool_call_id: "big", content: "y".repeat(50_000) });
    expect(compact(before, opts(500))?.messages.at(-1)?.content).toHaveLength(50_000);
    const c = compact(before, opts(500, { aggressive: true }));
    expect(c?.messages.at(-1)?.content?.length).toBeLessThan(2000);
    expect(validForOpenAI(c?.messages ?? [])).toBeUndefined();
  });

  it("cuts head and tail with the truncate strategy, and changes nothing when nothing can go", () => {
    const before = conversation(4);
    const c = compact(before, opts(tokens(before) - 500, { params: { ...params, strategy: "truncate" } }));
    expect(c?.messages[3]?.content).toMatch(
      /^Current program[\s\S]*\n\[context_budget: \d+ characters cut\]\n[\s\S]*line of the program\n$/,
    );
    expect(compact(conversation(1), opts(1))).toBeUndefined();
  });
});

describe("the context keeper", () => {
  const response = (prompt_tokens: number, context_window?: number): ChatResponse => ({
    message: { content: null, tool_calls: [] },
    finish_reason: "stop",
    usage: { prompt_tokens, completion_tokens: 1, total_tokens: prompt_tokens + 1 },
    latency_ms: 1,
    attempts: 1,
    model: "m",
    context_window,
  });

  it("learns the window from the endpoint and the token rate from the server's prompt_tokens, then compacts past the limit", () => {
    const messages = conversation(6);
    const keeper = new ContextKeeper(params, 1000, 0);
    expect(keeper.beforeCall(messages)).toBeUndefined(); // no window known yet
    keeper.observe(response(Math.ceil(charsOf(messages) / 4), 8192), messages);
    expect(keeper.limit()).toBe(Math.floor((8192 - 1000) * 0.8));
    const c = keeper.beforeCall(messages);
    expect(c?.record).toMatchObject({ trigger: "budget", window: 8192, strategy: "summarize" });
    expect(c?.record.tokens_after).toBeLessThanOrEqual(Math.floor((8192 - 1000) * 0.8 * 0.7));
  });

  it("takes the smaller of the harness's window and the endpoint's", () => {
    const keeper = new ContextKeeper({ ...params, context_window: 4096 }, 0, 0);
    keeper.observe(response(100, 32768), conversation(1));
    expect(keeper.limit()).toBe(Math.floor(4096 * 0.8));
  });

  it("after a refusal, learns the window the server named and compacts harder", () => {
    const messages = conversation(6);
    const keeper = new ContextKeeper(params, 0, 0);
    const err = new ModelError("context_length", "too long", { url: "u", contextWindow: 2048, promptTokens: 9000 });
    const c = keeper.afterRefusal(err, messages);
    expect(c?.record).toMatchObject({ trigger: "context_error", window: 2048 });
    expect(c?.record.tokens_after).toBeLessThanOrEqual(Math.floor(2048 * 0.8 * 0.7));
  });
});
