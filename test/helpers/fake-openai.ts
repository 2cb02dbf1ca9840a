import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLoopback } from "./loopback.ts";

/** One scripted answer: a status and JSON body, or a dropped connection. */
export type FakeReply = { status?: number; body?: unknown; headers?: Record<string, string>; drop?: boolean; delayMs?: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown> | undefined;
}

/**
 * A fake OpenAI-compatible server speaking the real wire protocol: scripted replies to /v1/chat/completions in
 * order (the last one repeats), a model list on /v1/models, every request recorded.
 */
export async function startFakeOpenAI(script: FakeReply[], models: string[] | FakeReply = ["fake-model"]) {
  const requests: RecordedRequest[] = [];
  let i = 0;
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "").split("?")[0] ?? "";
    requests.push({ method: req.method ?? "", path, headers: req.headers, body: text ? JSON.parse(text) : undefined });
    if (path === "/v1/models" && !Array.isArray(models)) {
      res.writeHead(models.status ?? 500, { "content-type": "application/json" });
      res.end(JSON.stringify(models.body ?? {}));
      return;
    }
    if (path === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          object: "list",
          data: (models as string[]).map((id) => ({ id, object: "model", created: 0, owned_by: "fake" })),
        }),
      );
      return;
    }
    const reply = script[Math.min(i++, script.length - 1)] ?? { status: 500, body: { error: { message: "no script" } } };
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (reply.drop) {
      req.socket.destroy();
      return;
    }
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
    res.end(JSON.stringify(reply.body ?? {}));
  });
  return {
    ...(await listenLoopback(server)),
    requests,
    chatRequests: () => requests.filter((r) => r.path === "/v1/chat/completions"),
  };
}

export function completion(
  message: { content?: string | null; tool_calls?: { id?: string; name: string; arguments: string }[] },
  usage = { prompt_tokens: 10, completion_tokens: 5 },
) {
  const calls = message.tool_calls?.map((c, i) => ({
    id: c.id ?? `call_${i}`,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
  return {
    status: 200,
    body: {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 0,
      model: "fake-model",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: message.content ?? null, ...(calls ? { tool_calls: calls } : {}) },
          finish_reason: calls ? "tool_calls" : "stop",
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

export const apiError = (status: number, message: string, headers?: Record<string, string>): FakeReply => ({
  status,
  headers,
  body: { error: { message, type: "error", code: status } },
});
