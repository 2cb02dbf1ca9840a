import type { ChatRequest } from "../types.ts";
import { pastCalls, textOf } from "./conversation.ts";
import { toToolCall } from "./discovery-executor.ts";
import { registerOfflineRole } from "./policy.ts";
import { seedFrom } from "./rng.ts";

/**
 * The offline model as a QA solver. It does not read the question: it takes the numbers in it and combines them by
 * a strategy named in the prompt (`hone-hint: qa_strategy=last|sum|product|difference|ratio`), checks with the
 * calculator, and answers in "#### n" form. Its accuracy is low and depends on the strategy, which is what a
 * trainer can improve; with `oracle_answer` offered (the oracle harness) it calls that.
 */
function strategyExpression(numbers: number[], strategy: string): string {
  if (numbers.length === 0) return "0";
  const n = numbers.map((x) => `(${x})`);
  switch (strategy) {
    case "sum":
      return n.join(" + ");
    case "product":
      return n.join(" * ");
    case "difference":
      return n.length > 1 ? `${n[0]} - ${n.slice(1).join(" - ")}` : (n[0] as string);
    case "ratio":
      return n.length > 1 ? `${n[0]} / ${n[1]}` : (n[0] as string);
    default:
      return n[n.length - 1] as string;
  }
}

registerOfflineRole({
  name: "qa-solver",
  claims: (r) => (r.tools ?? []).some((t) => t.function.name === "final_answer" || t.function.name === "oracle_answer"),
  reply: (r: ChatRequest) => {
    const id = (name: string) => `call_${seedFrom(r.messages.length, name).toString(16)}`;
    const tools = new Set((r.tools ?? []).map((t) => t.function.name));
    if (tools.has("oracle_answer"))
      return { content: null, tool_calls: [toToolCall({ name: "oracle_answer", args: {} }, id("oracle"))] };
    const system = textOf(r.messages, ["system"]).join("\n");
    const strategy = /hone-hint: qa_strategy=([a-z]+)/.exec(system)?.[1] ?? "last";
    const question = textOf(r.messages, ["user"])[0] ?? "";
    const numbers = (question.match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number).filter(Number.isFinite);
    const calls = pastCalls(r.messages);
    const calc = calls.find((c) => c.name === "calculator" && !c.failed && c.result);
    if (!calc && tools.has("calculator")) {
      return {
        content: "Let me compute.",
        tool_calls: [toToolCall({ name: "calculator", args: { expression: strategyExpression(numbers, strategy) } }, id("calc"))],
      };
    }
    const value = calc?.result ? Number(calc.result) : (numbers[numbers.length - 1] ?? 0);
    return {
      content: null,
      tool_calls: [
        toToolCall(
          { name: "final_answer", args: { answer: `#### ${Number.isFinite(value) ? Number(value.toPrecision(12)) : 0}` } },
          id("final"),
        ),
      ],
    };
  },
});
