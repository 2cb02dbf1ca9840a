import type { ChatMessage } from "../types.ts";

/** A tool call the model made earlier in the conversation, with the result the harness returned for it. */
export interface PastCall {
  name: string;
  args: Record<string, unknown>;
  result?: string;
  failed: boolean;
}

/** The offline model is stateless: everything it knows it reads back from the messages. */
export function pastCalls(messages: readonly ChatMessage[]): PastCall[] {
  const byId = new Map<string, PastCall>();
  const ordered: PastCall[] = [];
  for (const m of messages) {
    if (m.role === "assistant" && m.tool_calls) {
      for (const c of m.tool_calls) {
        let args: Record<string, unknown> = {};
        try {
          const parsed = JSON.parse(c.function.arguments || "{}");
          if (parsed && typeof parsed === "object") args = parsed as Record<string, unknown>;
        } catch {
          // A malformed call of our own is simply a failed call.
        }
        const call: PastCall = { name: c.function.name, args, failed: false };
        byId.set(c.id, call);
        ordered.push(call);
      }
    } else if (m.role === "tool") {
      const call = byId.get(m.tool_call_id);
      if (call) {
        call.result = m.content;
        call.failed = /^error\b/i.test(m.content.trimStart());
      }
    }
  }
  return ordered;
}

export function textOf(messages: readonly ChatMessage[], roles: readonly ChatMessage["role"][]): string[] {
  return messages.filter((m) => roles.includes(m.role)).map((m) => (typeof m.content === "string" ? m.content : ""));
}

export function jsonResult(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  const start = text.indexOf("{");
  if (start < 0) return undefined;
  try {
    const v = JSON.parse(text.slice(start));
    return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
