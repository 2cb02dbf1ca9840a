import type { ChatRequest } from "../types.ts";
import { textOf } from "./conversation.ts";
import { toToolCall } from "./discovery-executor.ts";
import { registerOfflineRole } from "./policy.ts";
import { seedFrom } from "./rng.ts";

/**
 * The offline model as a coder (HumanEval, MBPP through final_answer). It does not read the problem: it finds the
 * function's name and parameters (the prompt's last `def`, or the name the tests call) and submits a function that
 * returns a fixed guess named by `hone-hint: code_strategy=first_arg|none|zero|empty` (first_arg by default). It
 * passes only problems whose answer is that guess.
 */
const CODE_TASK = /Give your final answer as Python code/;

function guess(strategy: string, first: string): string {
  if (strategy === "none") return "None";
  if (strategy === "zero") return "0";
  if (strategy === "empty") return "[]";
  return first || "None";
}

export function offlineProgram(question: string, strategy: string): string {
  const defs = [...question.matchAll(/^def\s+([A-Za-z_]\w*)\s*\(([^)]*)\)/gm)];
  const last = defs[defs.length - 1];
  if (last) {
    const first = (last[2] ?? "").split(",")[0]?.split(":")[0]?.replace("*", "").trim() ?? "";
    return `    return ${guess(strategy, first)}\n`;
  }
  const name = /assert\s+(?:[\w.]+\()?\s*([A-Za-z_]\w*)\s*\(/.exec(question)?.[1] ?? "solution";
  return `def ${name}(*args):\n    return ${guess(strategy, "args[0] if args else None")}\n`;
}

registerOfflineRole({
  name: "coder",
  claims: (r: ChatRequest) =>
    (r.tools ?? []).some((t) => t.function.name === "final_answer") && CODE_TASK.test(textOf(r.messages, ["user"])[0] ?? ""),
  reply: (r) => {
    const system = textOf(r.messages, ["system"]).join("\n");
    const strategy = /hone-hint: code_strategy=([a-z_]+)/.exec(system)?.[1] ?? "first_arg";
    const answer = offlineProgram(textOf(r.messages, ["user"])[0] ?? "", strategy);
    const id = `call_${seedFrom(r.messages.length, "final", r.sampling?.seed).toString(16)}`;
    return { content: null, tool_calls: [toToolCall({ name: "final_answer", args: { answer } }, id)] };
  },
});
