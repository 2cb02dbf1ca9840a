import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { offlineReply } from "../../src/model/offline/policy.ts";
import "../../src/model/offline/roles.ts";
import { requestFromBody } from "../../src/model/offline/server.ts";

/**
 * A fake vLLM server with runtime LoRA loading: /v1/models lists the base model and loaded adapters,
 * /v1/chat/completions answers (with the offline model's policy) only for a served model name, and
 * POST /v1/load_lora_adapter {lora_name, lora_path} adds an adapter, answering as vLLM does.
 */
export async function startFakeVllm(baseModel: string) {
  const served = new Set([baseModel]);
  const loads: { lora_name: string; lora_path: string }[] = [];
  const chatModels: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.url === "/v1/models")
      return json(200, { object: "list", data: [...served].map((id) => ({ id, object: "model", owned_by: "vllm" })) });
    if (req.url === "/v1/load_lora_adapter" && req.method === "POST") {
      if (!body.lora_name || !body.lora_path)
        return json(400, { object: "error", message: "lora_name and lora_path are required", code: 400 });
      loads.push(body);
      served.add(body.lora_name);
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
    }
    if (req.url === "/v1/chat/completions") {
      if (!served.has(body.model))
        return json(404, {
          object: "error",
          message: `The model \`${body.model}\` does not exist.`,
          type: "NotFoundError",
          code: 404,
        });
      chatModels.push(body.model);
      const reply = offlineReply(requestFromBody(body));
      return json(200, {
        id: "chatcmpl-fake",
        object: "chat.completion",
        created: 0,
        model: body.model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: reply.content,
              ...(reply.tool_calls.length ? { tool_calls: reply.tool_calls } : {}),
            },
            finish_reason: reply.tool_calls.length ? "tool_calls" : "stop",
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
    }
    json(404, { object: "error", message: "not found", code: 404 });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    loads,
    chatModels,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
