import type { ChatRequest } from "../types.ts";
import { pastCalls, textOf } from "./conversation.ts";
import { toToolCall } from "./discovery-executor.ts";
import { registerOfflineRole } from "./policy.ts";
import { seedFrom } from "./rng.ts";

/**
 * The offline model as a tool-using customer-service agent (harnesses/tool-agent, marked `hone-hint: agent=tool-agent`).
 * It does not understand the user: it picks identifiers out of what the user wrote by their shape (an email, "#W"
 * order ids, user ids like name_name_1234, six-letter reservation codes, a name followed by "in" and a zip code),
 * looks each up once with the lookup tools the task offers, and otherwise answers with the start of the last result.
 * It never changes anything, so it solves no task that needs a change; it drives the tools and the conversation.
 */
const HINT = /hone-hint: agent=tool-agent/;

interface Lookup {
  tool: string;
  args: Record<string, string>;
}

function lookups(said: string, found: string[]): Lookup[] {
  const out: Lookup[] = [];
  for (const email of said.match(/[\w.+-]+@[\w-]+\.[\w.]+/g) ?? []) out.push({ tool: "find_user_id_by_email", args: { email } });
  const person = /\b([A-Z][a-z]+) ([A-Z][a-z]+) in (\d{5})\b/.exec(said);
  if (person)
    out.push({
      tool: "find_user_id_by_name_zip",
      args: { first_name: person[1] as string, last_name: person[2] as string, zip: person[3] as string },
    });
  const users = [...(said.match(/\b[a-z]+_[a-z]+_\d{4}\b/g) ?? []), ...found];
  for (const user_id of users) out.push({ tool: "get_user_details", args: { user_id } });
  for (const order_id of said.match(/#W\d{7}/g) ?? []) out.push({ tool: "get_order_details", args: { order_id } });
  for (const reservation_id of said.match(/\b[A-Z0-9]{6}\b/g) ?? [])
    if (/[A-Z]/.test(reservation_id) && /\d/.test(reservation_id))
      out.push({ tool: "get_reservation_details", args: { reservation_id } });
  return out;
}

registerOfflineRole({
  name: "tool-agent",
  claims: (r: ChatRequest) =>
    HINT.test(textOf(r.messages, ["system"]).join("\n")) && !(r.tools ?? []).some((t) => t.function.name === "oracle_answer"),
  reply: (r) => {
    const tools = new Set((r.tools ?? []).map((t) => t.function.name));
    const calls = pastCalls(r.messages);
    const found = calls
      .filter((c) => c.name.startsWith("find_user_id") && !c.failed && c.result)
      .map((c) => String(c.result).trim());
    const done = new Set(calls.map((c) => `${c.name} ${JSON.stringify(c.args)}`));
    const next = lookups(textOf(r.messages, ["user"]).join("\n"), found).find(
      (l) => tools.has(l.tool) && !done.has(`${l.tool} ${JSON.stringify(l.args)}`),
    );
    if (next) {
      const id = `call_${seedFrom(r.messages.length, next.tool, r.sampling?.seed).toString(16)}`;
      return { content: null, tool_calls: [toToolCall({ name: next.tool, args: next.args }, id)] };
    }
    const last = [...calls].reverse().find((c) => c.result);
    const content = last
      ? `Here is what I found: ${String(last.result).slice(0, 160)}. Is there anything else I can help with?`
      : "Could you tell me your email, or your name and zip code, or your user id?";
    return { content, tool_calls: [] };
  },
});
