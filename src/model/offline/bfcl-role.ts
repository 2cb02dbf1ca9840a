import type { ChatRequest } from "../types.ts";
import { textOf } from "./conversation.ts";
import { toToolCall } from "./discovery-executor.ts";
import { registerOfflineRole } from "./policy.ts";
import { seedFrom } from "./rng.ts";

/**
 * The offline model on BFCL (function calling through final_answer). It does not read the question: it calls the
 * first function offered with its required parameters filled by their type (the question's first integer or number,
 * its first quoted text, true, an empty list or object). Right only by accident.
 */
const HEADER = "Functions you can call (JSON Schema):";

interface Fn {
  name?: string;
  parameters?: { properties?: Record<string, { type?: string }>; required?: string[] };
}

export function offlineCalls(question: string): string {
  let fns: Fn[] = [];
  try {
    const rest = question.slice(question.indexOf(HEADER) + HEADER.length).split("\n\nGive your final answer")[0] ?? "";
    fns = JSON.parse(rest.slice(0, rest.lastIndexOf("]") + 1)) as Fn[];
  } catch {
    return "[]";
  }
  const fn = fns[0];
  if (!fn?.name) return "[]";
  const text = question.slice(0, question.indexOf(HEADER));
  const int = text.match(/-?\b\d+\b/)?.[0];
  const num = text.match(/-?\d+(?:\.\d+)?/)?.[0];
  const quoted = /["']([^"']{1,80})["']/.exec(text)?.[1];
  const value = (type: string | undefined): unknown => {
    if (type === "integer") return int ? Number(int) : 0;
    if (type === "float" || type === "number") return num ? Number(num) : 0;
    if (type === "boolean") return true;
    if (type === "array" || type === "tuple") return [];
    if (type === "dict" || type === "object") return {};
    return quoted ?? "";
  };
  const props = fn.parameters?.properties ?? {};
  const args = Object.fromEntries((fn.parameters?.required ?? []).map((p) => [p, value(props[p]?.type)]));
  return JSON.stringify([{ [fn.name]: args }]);
}

registerOfflineRole({
  name: "bfcl-caller",
  claims: (r: ChatRequest) =>
    (r.tools ?? []).some((t) => t.function.name === "final_answer") && (textOf(r.messages, ["user"])[0] ?? "").includes(HEADER),
  reply: (r) => {
    const answer = offlineCalls(textOf(r.messages, ["user"])[0] ?? "");
    const id = `call_${seedFrom(r.messages.length, "final", r.sampling?.seed).toString(16)}`;
    return { content: null, tool_calls: [toToolCall({ name: "final_answer", args: { answer } }, id)] };
  },
});
