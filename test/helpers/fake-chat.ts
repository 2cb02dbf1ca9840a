import type { IncomingMessage, ServerResponse } from "node:http";
import { offlineReply } from "../../src/model/offline/policy.ts";
import "../../src/model/offline/roles.ts";
import { requestFromBody } from "../../src/model/offline/server.ts";

/**
 * What the strict fakes share: the offline model's policy as their "brain" (so a discovery rollout really runs
 * against them), a token count a server might make, and the two ways of sending an answer: one JSON body, or
 * server-sent events as OpenAI and vLLM stream them.
 */
export interface Reply {
  content: string | null;
  reasoning?: string;
  tool_calls: { id?: string; type: "function"; function: { name: string; arguments: string } }[];
}

export function brain(body: Record<string, unknown>): Reply {
  const r = offlineReply(requestFromBody(body));
  const names = r.tool_calls.map((c) => c.function.name).join(", ") || "a text answer";
  return { content: r.content, tool_calls: r.tool_calls, reasoning: `Looking at the conversation, the next step is ${names}.` };
}

/** About four characters a token, over the messages and the tool definitions. */
export function promptTokens(body: Record<string, unknown>): number {
  return Math.ceil((JSON.stringify(body.messages ?? []).length + JSON.stringify(body.tools ?? []).length) / 4);
}

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export interface Answer {
  id: string;
  model: string;
  /** The message as a whole completion sends it (field names are the server family's). */
  message: Record<string, unknown>;
  finish_reason: string;
  usage: Record<string, unknown>;
  /** Extra fields of every chunk and completion (system_fingerprint, …). */
  extra?: Record<string, unknown>;
}

export function sendWhole(res: ServerResponse, a: Answer): void {
  sendJson(res, 200, {
    id: a.id,
    object: "chat.completion",
    created: 1_700_000_000,
    model: a.model,
    choices: [{ index: 0, message: a.message, logprobs: null, finish_reason: a.finish_reason }],
    usage: a.usage,
    ...a.extra,
  });
}

/**
 * The same answer as a stream: a role chunk, reasoning and content in pieces, each tool call's id and name then its
 * arguments in pieces, the finish reason, and with include_usage a last chunk with no choices and the usage.
 * `stallAfter` stops sending after that many chunks and holds the connection open (a stalled server).
 */
export function sendStream(res: ServerResponse, a: Answer, o: { includeUsage: boolean; stallAfter?: number }): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunks: Record<string, unknown>[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    chunks.push({
      id: a.id,
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: a.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(o.includeUsage ? { usage: null } : {}),
      ...a.extra,
    });
  const m = a.message;
  chunk({ role: "assistant", content: "" });
  for (const field of ["reasoning", "reasoning_content"])
    if (typeof m[field] === "string") for (const piece of pieces(m[field] as string)) chunk({ [field]: piece });
  if (typeof m.content === "string") for (const piece of pieces(m.content)) chunk({ content: piece });
  const calls = (m.tool_calls ?? []) as { id?: string; function: { name: string; arguments: string } }[];
  calls.forEach((c, index) => {
    chunk({
      tool_calls: [
        { index, ...(c.id ? { id: c.id } : {}), type: "function", function: { name: c.function.name, arguments: "" } },
      ],
    });
    for (const piece of pieces(c.function.arguments)) chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
  });
  chunk({}, a.finish_reason);
  if (o.includeUsage)
    chunks.push({
      id: a.id,
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: a.model,
      choices: [],
      usage: a.usage,
    });
  const sent = o.stallAfter === undefined ? chunks : chunks.slice(0, o.stallAfter);
  for (const c of sent) res.write(`data: ${JSON.stringify(c)}\n\n`);
  if (o.stallAfter !== undefined) return; // Nothing more, ever: the client must give up on its own.
  res.end("data: [DONE]\n\n");
}

function pieces(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
