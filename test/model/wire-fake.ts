import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLoopback } from "../helpers/loopback.ts";

/**
 * A fake chat-completions server for the protocol faults of test/model/protocol-faults.test.ts, speaking the wire
 * format of vLLM or OpenAI byte for byte: whole completions, server-sent events (`data: {chunk}\n\n` … `data: [DONE]`),
 * errors in `{"error": {...}}`, and the faults a real server or proxy shows (a stream that stops cleanly without its
 * end, endless bodies, retry headers). Each chat request is answered by the next reply of the script (the last
 * repeats); a vLLM-flavoured fake first checks the history as vLLM's chat template rendering does.
 */
export type Flavor = "vllm" | "openai";
export type WireReply = (res: ServerResponse, body: Record<string, unknown>, flavor: Flavor) => void;

export interface WireFakeOptions {
  flavor: Flavor;
  /** What /v1/models answers (default: the list with the one model). */
  models?: WireReply;
}

export async function startWireFake(script: WireReply[], o: WireFakeOptions) {
  const requests: Record<string, unknown>[] = [];
  const refusals: string[] = [];
  let i = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (req.method === "GET" && path === "/v1/models") return (o.models ?? modelList)(res, {}, o.flavor);
    if (req.method !== "POST" || path !== "/v1/chat/completions") return sendError(res, 404, "Not Found", o.flavor);
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    requests.push(body);
    const problem = o.flavor === "vllm" ? renderHistory(body) : undefined;
    if (problem) {
      refusals.push(problem);
      return sendError(res, 400, problem, o.flavor);
    }
    const reply = script[Math.min(i++, script.length - 1)];
    reply?.(res, body, o.flavor);
  });
  return { ...(await listenLoopback(server)), requests, refusals };
}

/**
 * vLLM's chat_utils `_postprocess_messages`: every past tool call's non-empty arguments go through `json.loads`
 * (a JSONDecodeError is a 400), and the chat templates that iterate them (`tool_call.arguments | items`: Llama 3,
 * Hermes) fail on anything but a mapping.
 */
function renderHistory(body: Record<string, unknown>): string | undefined {
  for (const m of (body.messages ?? []) as { role?: string; tool_calls?: { function?: { arguments?: string } }[] }[]) {
    if (m.role !== "assistant") continue;
    for (const c of m.tool_calls ?? []) {
      const args = c.function?.arguments;
      if (!args) continue;
      let v: unknown;
      try {
        v = JSON.parse(args);
      } catch {
        return `Unterminated string starting at: line 1 column 7 (char 6)`;
      }
      if (v === null || typeof v !== "object" || Array.isArray(v)) return "Can only get item pairs from a mapping.";
    }
  }
  return undefined;
}

export function sendError(res: ServerResponse, status: number, message: string, flavor: Flavor, headers = {}): void {
  const error =
    flavor === "vllm"
      ? { message, type: "BadRequestError", param: null, code: status }
      : { message, type: "invalid_request_error", param: null, code: null };
  const text = JSON.stringify({ error });
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

export const errorReply =
  (status: number, message: string, headers: Record<string, string> = {}, code?: string): WireReply =>
  (res, _body, flavor) => {
    if (code === undefined) return sendError(res, status, message, flavor, headers);
    const text = JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } });
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(text);
  };

const modelList: WireReply = (res, _body, flavor) => {
  const text = JSON.stringify({
    object: "list",
    data: [{ id: "m", object: "model", created: 1_700_000_000, owned_by: flavor === "vllm" ? "vllm" : "system" }],
  });
  res.writeHead(200, { "content-type": "application/json" });
  res.end(text);
};

/** What an answer says; each flavor writes it with its own fields. */
export interface Said {
  content?: string | null;
  refusal?: string;
  tool_calls?: { id: string; name: string; arguments: string }[];
  finish_reason: string;
}

const usage = { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 };

function messageOf(a: Said, flavor: Flavor): Record<string, unknown> {
  const calls = (a.tool_calls ?? []).map((c) => ({
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
  return {
    role: "assistant",
    content: a.content ?? null,
    ...(flavor === "openai" ? { refusal: a.refusal ?? null, annotations: [] } : { reasoning_content: null }),
    ...(calls.length || flavor === "vllm" ? { tool_calls: calls } : {}),
  };
}

/** One whole completion. */
export const whole =
  (a: Said): WireReply =>
  (res, body, flavor) => {
    const text = JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model,
      choices: [{ index: 0, message: messageOf(a, flavor), logprobs: null, finish_reason: a.finish_reason }],
      usage,
    });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };

/**
 * The same answer streamed as its server family streams it. `end`: how the stream ends — `full` (the finish reason,
 * the usage chunk, `data: [DONE]`), `no-done` (the finish reason but no [DONE], as some proxies end), `cut` (the
 * connection closed cleanly after the content, with neither), `done-only` ([DONE] without a finish reason).
 */
export const streamed =
  (a: Said, end: "full" | "no-done" | "cut" | "done-only" = "full", eol = "\n"): WireReply =>
  (res, body, flavor) => {
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1_700_000_000, model: body.model };
    const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(withUsage && flavor === "vllm" ? { usage: null } : {}),
    });
    const first =
      flavor === "openai"
        ? { role: "assistant", content: a.refusal ? null : "", refusal: a.refusal ? "" : null }
        : { role: "assistant", content: "" };
    const events = [chunk(first)];
    for (const piece of split(a.content ?? "")) events.push(chunk({ content: piece }));
    for (const piece of split(a.refusal ?? "")) events.push(chunk({ refusal: piece }));
    (a.tool_calls ?? []).forEach((c, index) => {
      events.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
      for (const piece of split(c.arguments)) events.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    });
    const finishes = end === "full" || end === "no-done";
    if (finishes) events.push(chunk({}, a.finish_reason));
    if (finishes && withUsage) events.push({ ...base, choices: [], usage } as unknown as (typeof events)[number]);
    let text = events.map((e) => `data: ${JSON.stringify(e)}${eol}${eol}`).join("");
    if (end === "full" || end === "done-only") text += `data: [DONE]${eol}${eol}`;
    // In small pieces, so lines (and the [DONE] line) are split across network reads.
    const bytes = Buffer.from(text);
    for (let at = 0; at < bytes.length; at += 5) res.write(bytes.subarray(at, at + 5));
    res.end();
  };

/**
 * A 200 (or other status) whose body never ends: the start of a completion, then bytes without a newline for as long
 * as the client reads. With `eventStream` it is an event stream whose first event never ends: one endless line, or
 * with `lines` endless `data:` lines and never the blank line that ends an event.
 */
export const endless =
  (o: { status?: number; eventStream?: boolean; lines?: boolean } = {}): WireReply =>
  (res) => {
    res.writeHead(o.status ?? 200, { "content-type": o.eventStream ? "text/event-stream" : "application/json" });
    res.write(o.eventStream ? 'data: {"id":"' : '{"id":"x","choices":[{"message":{"content":"');
    const junk = o.lines ? Buffer.from("aaaaaaa\ndata: ".repeat(1 << 16)) : Buffer.alloc(1 << 20, 0x61);
    const pump = () => {
      while (!res.destroyed && res.write(junk)) {}
    };
    res.on("drain", pump);
    res.on("close", () => res.removeListener("drain", pump));
    pump();
  };

function split(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
