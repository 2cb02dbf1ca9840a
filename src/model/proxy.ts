import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requestFromBody } from "./offline/wire.ts";
import { type ChatModel, type ChatRequest, type ChatResponse, REASONING_EFFORTS, type ReasoningEffort } from "./types.ts";

const MAX_BODY = 8 << 20;

export interface ModelProxy {
  /** The folder holding `model.sock` (0700), to bind into a sealed command's sandbox. */
  socketDir: string;
  /** The bearer token the proxy accepts: the only "API key" a program it serves ever sees. */
  token: string;
  /** The model id the proxy serves (HONE_MODEL). */
  modelId: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const fail = (res: ServerResponse, status: number, message: string) =>
  send(res, status, {
    error: { message, type: status === 401 ? "authentication_error" : "invalid_request_error", code: status },
  });

function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve(undefined);
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(undefined));
  });
}

const TOOL_CHOICES = ["auto", "required", "none"] as const;

/**
 * A program's request as hone's model takes it: the messages, tools and sampling the offline server reads, and what
 * else a program may ask that changes the answer (tool_choice, penalties, reasoning_effort, parallel_tool_calls), so
 * `tool_choice: "none"` is not sent on as "auto". Values of the wrong type are left out, as before.
 */
export function programRequest(body: Record<string, unknown>): ChatRequest {
  const request = requestFromBody(body);
  const sampling = request.sampling ?? {};
  const choice = body.tool_choice;
  if (typeof choice === "string" && (TOOL_CHOICES as readonly string[]).includes(choice))
    request.tool_choice = choice as ChatRequest["tool_choice"];
  for (const k of ["presence_penalty", "frequency_penalty"] as const)
    if (typeof body[k] === "number" && Number.isFinite(body[k])) sampling[k] = body[k] as number;
  const effort = body.reasoning_effort;
  if (typeof effort === "string" && (REASONING_EFFORTS as readonly string[]).includes(effort))
    sampling.reasoning_effort = effort as ReasoningEffort;
  if (typeof body.parallel_tool_calls === "boolean") sampling.parallel_tool_calls = body.parallel_tool_calls;
  return { ...request, sampling };
}

function completionBody(modelId: string, r: ChatResponse): Record<string, unknown> {
  const message = {
    role: "assistant",
    content: r.message.content,
    ...(r.message.tool_calls.length ? { tool_calls: r.message.tool_calls } : {}),
  };
  return {
    id: `chatcmpl-${randomBytes(8).toString("hex")}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: modelId,
    choices: [{ index: 0, message, finish_reason: r.finish_reason }],
    usage: r.usage,
  };
}

/** A streamed answer: the whole message as one delta, the finish reason, usage when asked, then [DONE]. */
function streamBody(res: ServerResponse, modelId: string, r: ChatResponse, usage: boolean): void {
  const base = {
    id: `chatcmpl-${randomBytes(8).toString("hex")}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: modelId,
  };
  const delta = {
    role: "assistant",
    content: r.message.content ?? "",
    ...(r.message.tool_calls.length ? { tool_calls: r.message.tool_calls.map((t, index) => ({ index, ...t })) } : {}),
  };
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: r.finish_reason }] })}\n\n`);
  if (usage) res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: r.usage })}\n\n`);
  res.end("data: [DONE]\n\n");
}

/**
 * An OpenAI-compatible endpoint on a Unix socket in front of one of hone's models, for programs hone runs sealed
 * (harnesses and methods given as programs). Every call goes through the ChatModel, so it is cached, recorded,
 * replayed and counted like any other; the program sees a random token, never a real API key, and reaches no
 * other endpoint. `onCall` hears every completed call.
 */
export async function startModelProxy(
  model: ChatModel,
  modelId: string,
  onCall?: (request: ChatRequest, response: ChatResponse) => void,
): Promise<ModelProxy> {
  const socketDir = mkdtempSync(join(tmpdir(), "hone-model-"));
  const token = `hone-${randomBytes(24).toString("hex")}`;
  // The n-th identical request is its own sample (trial n), so a program that samples twice gets two answers.
  const seen = new Map<string, number>();
  const server = createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) return fail(res, 401, "unknown API key");
    const url = (req.url ?? "").replace(/\?.*$/, "");
    if (req.method === "GET" && url === "/v1/models")
      return send(res, 200, { object: "list", data: [{ id: modelId, object: "model", owned_by: "hone" }] });
    if (req.method !== "POST" || url !== "/v1/chat/completions") return fail(res, 404, `no route ${req.method} ${url}`);
    const text = await readBody(req);
    if (text === undefined) return fail(res, 413, `the request body is larger than ${MAX_BODY} bytes`);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text);
    } catch {
      return fail(res, 400, "the request body is not JSON");
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) return fail(res, 400, "messages must be a non-empty array");
    try {
      const request = programRequest(body);
      const key = createHash("sha256").update(text).digest("hex");
      request.trial = seen.get(key) ?? 0;
      seen.set(key, request.trial + 1);
      const response = await model.complete(request);
      onCall?.(request, response);
      if (body.stream === true)
        return streamBody(
          res,
          modelId,
          response,
          (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
        );
      send(res, 200, completionBody(modelId, response));
    } catch (err) {
      fail(res, 502, `the model call failed: ${(err as Error).message}`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(join(socketDir, "model.sock"), () => resolve());
  });
  return {
    socketDir,
    token,
    modelId,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(socketDir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
