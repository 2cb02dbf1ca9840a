import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { offlineReply } from "./policy.ts";
import "./roles.ts";
import { OFFLINE_MODEL_ID, requestFromBody } from "./wire.ts";

export { OFFLINE_MODEL_ID, requestFromBody };

export interface OfflineServerOptions {
  port?: number;
  host?: string;
  /** Added latency per chat completion, for benchmarks and demos. */
  latencyMs?: number;
}

export interface OfflineServer {
  /** Base URL including `/v1`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const approxTokens = (s: string) => Math.ceil(s.length / 4);

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function openAiError(res: ServerResponse, status: number, message: string, type: string): void {
  sendJson(res, status, { error: { message, type, param: null, code: status } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads an OpenAI chat-completions body back into hone's request shape. */
function completion(body: Record<string, unknown>): Record<string, unknown> {
  const request = requestFromBody(body);
  const reply = offlineReply(request);
  const promptTokens = approxTokens(JSON.stringify(request.messages));
  const completionTokens =
    approxTokens(reply.content ?? "") + reply.tool_calls.reduce((n, c) => n + approxTokens(c.function.arguments) + 4, 0);
  return {
    id: `chatcmpl-offline-${promptTokens}-${completionTokens}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: OFFLINE_MODEL_ID,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: reply.content,
          ...(reply.tool_calls.length ? { tool_calls: reply.tool_calls } : {}),
        },
        finish_reason: reply.tool_calls.length ? "tool_calls" : "stop",
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, latencyMs: number): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method === "GET" && path === "/v1/models") {
    sendJson(res, 200, { object: "list", data: [{ id: OFFLINE_MODEL_ID, object: "model", created: 0, owned_by: "hone" }] });
    return;
  }
  if (req.method !== "POST" || path !== "/v1/chat/completions") {
    openAiError(res, 404, `no route ${req.method} ${path}`, "NotFoundError");
    return;
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(await readBody(req));
  } catch {
    openAiError(res, 400, "request body is not valid JSON", "BadRequestError");
    return;
  }
  if (body.model !== OFFLINE_MODEL_ID) {
    openAiError(res, 404, `The model \`${String(body.model)}\` does not exist.`, "NotFoundError");
    return;
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    openAiError(res, 400, "messages must be a non-empty array", "BadRequestError");
    return;
  }
  const answer = completion(body);
  if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
  if (body.stream === true) sendStream(res, answer, (body.stream_options as { include_usage?: unknown })?.include_usage === true);
  else sendJson(res, 200, answer);
}

/** The same completion as server-sent events: the message in one delta, then the usage chunk if asked for. */
function sendStream(res: ServerResponse, answer: Record<string, unknown>, includeUsage: boolean): void {
  const [choice] = answer.choices as { message: Record<string, unknown>; finish_reason: string }[];
  const { role, content, tool_calls } = choice?.message ?? {};
  const calls = ((tool_calls ?? []) as Record<string, unknown>[]).map((c, index) => ({ index, ...c }));
  const base = { id: answer.id, object: "chat.completion.chunk", created: answer.created, model: answer.model };
  const events = [
    {
      ...base,
      choices: [{ index: 0, delta: { role, content, ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason: null }],
    },
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: choice?.finish_reason }] },
    ...(includeUsage ? [{ ...base, choices: [], usage: answer.usage }] : []),
  ];
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.end(`${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`);
}

/** Starts the offline model on loopback. Port 0 picks a free port. */
export async function startOfflineServer(opts: OfflineServerOptions = {}): Promise<OfflineServer> {
  const latency = opts.latencyMs ?? 0;
  const server: Server = createServer((req, res) => {
    handle(req, res, latency).catch((err) =>
      openAiError(res, 500, `offline model failed: ${String(err)}`, "InternalServerError"),
    );
  });
  server.keepAliveTimeout = 60_000;
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/v1`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
