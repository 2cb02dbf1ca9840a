import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../src/model/body-limit.ts";
import { ModelError } from "../../src/model/errors.ts";
import { OpenAICompatibleModel, splitBaseUrl } from "../../src/model/openai-compatible.ts";
import type { ChatRequest } from "../../src/model/types.ts";
import { listenLoopback } from "../helpers/loopback.ts";

/**
 * The client against what hosted endpoints and the proxies before them do on the wire: Azure OpenAI's deployment
 * URLs (`…/openai/deployments/<name>?api-version=…`), compressed bodies, and fractional --timeouts.
 */
const request: ChatRequest = { messages: [{ role: "user", content: "hi" }] };
const completion = {
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "gpt-4.1-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "héllo ✓" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
};
const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1,
  model: "gpt-4.1-mini",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const events = [
  `data: ${JSON.stringify(chunk({ role: "assistant", content: "" }))}\n\n`,
  `data: ${JSON.stringify(chunk({ content: "héllo ✓" }))}\n\n`,
  `data: ${JSON.stringify(chunk({}, "stop"))}\n\n`,
  `data: ${JSON.stringify({ ...chunk({}), choices: [], usage: completion.usage })}\n\n`,
  "data: [DONE]\n\n",
].join("");

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

type Handler = (req: IncomingMessage, res: ServerResponse, body: Record<string, unknown> | undefined) => void;
async function serve(handler: Handler) {
  const seen: string[] = [];
  const server = createServer(async (req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    handler(req, res, text ? (JSON.parse(text) as Record<string, unknown>) : undefined);
  });
  const l = await listenLoopback(server);
  closers.push(l.close);
  return { origin: l.url.replace(/\/v1$/, ""), seen };
}

describe("Azure OpenAI deployment URLs: the base URL's query goes on every request, the key in api-key", () => {
  const AZURE_KEY = "0123456789abcdef0123456789abcdef";
  const env = { OPENAI_API_KEY: AZURE_KEY };
  /** Azure's data plane: the deployment in the path, api-version required in the query, 404 for anything else. */
  const azure: Handler = (req, res, body) => {
    const url = new URL(req.url ?? "", "http://x");
    const deployment = "/openai/deployments/gpt41";
    const version = url.searchParams.get("api-version");
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(v));
    };
    if (req.headers["api-key"] !== AZURE_KEY)
      return json(401, {
        error: {
          code: "401",
          message:
            "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
        },
      });
    // Azure refuses a request that carries both (langchain-ai/langchainjs#3856); its SDK sends api-key alone.
    if (req.headers.authorization !== undefined)
      return json(400, {
        error: { code: "400", message: "Either API-KEY or Authorization header must be provided but not both." },
      });
    if (version !== "2024-10-21") return json(404, { error: { code: "404", message: "Resource not found" } });
    if (req.method === "GET" && url.pathname === `${deployment}/models`) return json(200, { object: "list", data: [] });
    if (req.method !== "POST" || url.pathname !== `${deployment}/chat/completions`)
      return json(404, { error: { code: "404", message: "Resource not found" } });
    if (body?.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end(events);
    }
    json(200, completion);
  };

  for (const stream of [false, true])
    it(`reaches /chat/completions?api-version=… (${stream ? "streamed" : "whole"})`, async () => {
      const s = await serve(azure);
      const m = new OpenAICompatibleModel(
        { baseUrl: `${s.origin}/openai/deployments/gpt41?api-version=2024-10-21`, model: "gpt-4.1-mini", stream },
        env,
      );
      const r = await m.complete(request);
      expect(r.message.content).toBe("héllo ✓");
      expect(r.usage.total_tokens).toBe(12);
      expect(s.seen).toContain("POST /openai/deployments/gpt41/chat/completions?api-version=2024-10-21");
    });

  it("names the URL it called, query and all, when the endpoint refuses", async () => {
    const s = await serve(azure);
    const m = new OpenAICompatibleModel(
      { baseUrl: `${s.origin}/openai/deployments/other?api-version=2024-10-21`, model: "gpt-4.1-mini" },
      env,
    );
    const err = await m.complete(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).kind).toBe("unknown_model");
    expect((err as ModelError).message).not.toContain(AZURE_KEY);
    expect((err as ModelError).message).toContain(`${s.origin}/openai/deployments/other/chat/completions?api-version=2024-10-21`);
  });

  it("splits a base URL at its query only", () => {
    expect(splitBaseUrl("https://h/v1")).toEqual({ base: "https://h/v1", query: undefined });
    expect(splitBaseUrl("https://h/openai/deployments/d/?api-version=2024-10-21&x=a%2Fb")).toEqual({
      base: "https://h/openai/deployments/d/",
      query: { "api-version": "2024-10-21", x: "a/b" },
    });
    expect(splitBaseUrl("https://h/v1?")).toEqual({ base: "https://h/v1", query: undefined });
  });
});

describe("compressed bodies are read as fetch reads them", () => {
  const codings: [string, (b: Buffer) => Buffer][] = [
    ["gzip", (b) => gzipSync(b)],
    ["deflate", (b) => deflateSync(b)],
    ["br", (b) => brotliCompressSync(b)],
  ];
  /** A server that compresses whatever it sends: a request without Accept-Encoding accepts any coding (RFC 9110). */
  const compressing =
    (name: string, encode: (b: Buffer) => Buffer): Handler =>
    (req, res, body) => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json", "content-encoding": name });
        return res.end(encode(Buffer.from(JSON.stringify({ object: "list", data: [{ id: "m", max_model_len: 8192 }] }))));
      }
      if (body?.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": name });
        const bytes = encode(Buffer.from(events));
        // Sent in pieces that split the compressed stream anywhere.
        for (let i = 0; i < bytes.length; i += 7) res.write(bytes.subarray(i, i + 7));
        return res.end();
      }
      res.writeHead(200, { "content-type": "application/json", "content-encoding": name });
      res.end(encode(Buffer.from(JSON.stringify(completion))));
    };

  for (const [name, encode] of codings)
    for (const stream of [false, true])
      it(`${name} (${stream ? "streamed" : "whole"}): the answer, its usage and the window from /v1/models`, async () => {
        const s = await serve(compressing(name, encode));
        const m = new OpenAICompatibleModel({ baseUrl: `${s.origin}/v1`, model: "m", stream }, {});
        const r = await m.complete(request);
        expect(r.message.content).toBe("héllo ✓");
        expect(r.usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
        expect(r.context_window).toBe(8192);
      });

  it("an error body in gzip keeps the server's message (a context-length refusal stays one)", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(400, { "content-type": "application/json", "content-encoding": "gzip" });
      const message =
        "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.";
      res.end(gzipSync(JSON.stringify({ error: { message, type: "BadRequestError", param: null, code: 400 } })));
    });
    const m = new OpenAICompatibleModel({ baseUrl: `${s.origin}/v1`, model: "m" }, {});
    const err = (await m.complete(request).catch((e: unknown) => e)) as ModelError;
    expect(err.kind).toBe("context_length");
    expect(err.contextWindow).toBe(4096);
    expect(err.promptTokens).toBe(5000);
  });

  it("a gzip bomb is cut at the body limit, counted after decoding", async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_BODY_BYTES + 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(MAX_BODY_BYTES / 100);
    const s = await serve((req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(req.method === "GET" ? gzipSync("{}") : bomb);
    });
    const m = new OpenAICompatibleModel({ baseUrl: `${s.origin}/v1`, model: "m" }, {});
    const err = (await m.complete(request).catch((e: unknown) => e)) as ModelError;
    expect(err).toBeInstanceOf(ModelError);
    expect(err.message).toMatch(/passed the limit of 32 MB/);
  });

  it("a coding hone cannot undo is named", async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "compress" });
      res.end("\x1f\x9d junk");
    });
    const m = new OpenAICompatibleModel({ baseUrl: `${s.origin}/v1`, model: "m" }, {});
    const err = (await m.complete(request).catch((e: unknown) => e)) as ModelError;
    expect(err.message).toContain('content-encoding "compress"');
  });
});

describe("--timeouts in fractions of a second", () => {
  /**
   * The SDK refuses a per-request timeout that is not a whole number of ms: first_byte=4.02 is 4019.9999999999995 ms,
   * and connect=0.1 with first_byte=2.2 gives the model list 2300.0000000000005 ms (its window was then lost unsaid).
   */
  const cases = [
    { connect: 0.1, first_byte: 2.2 },
    { first_byte: 4.02, idle: 4.02, attempt: 8.03 },
  ];
  for (const timeouts of cases)
    for (const stream of [false, true])
      it(`${JSON.stringify(timeouts)} are honoured, not refused (${stream ? "streamed" : "whole"})`, async () => {
        const s = await serve((req, res, body) => {
          if (req.method === "GET") {
            res.writeHead(200, { "content-type": "application/json" });
            return res.end(JSON.stringify({ object: "list", data: [{ id: "m", max_model_len: 4096 }] }));
          }
          if (body?.stream === true) {
            res.writeHead(200, { "content-type": "text/event-stream" });
            return res.end(events);
          }
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(completion));
        });
        const m = new OpenAICompatibleModel({ baseUrl: `${s.origin}/v1`, model: "m", stream, timeouts }, {});
        const r = await m.complete(request);
        expect(r.message.content).toBe("héllo ✓");
        expect(r.context_window).toBe(4096);
      });
});

describe("an event stream's media type is read case-insensitively", () => {
  it("Text/Event-Stream; charset=UTF-8 is streamed, not read as a whole body", async () => {
    const s = await serve((req, res) => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ object: "list", data: [] }));
      }
      res.writeHead(200, { "content-type": "Text/Event-Stream; charset=UTF-8" });
      res.end(events);
    });
    const m = new OpenAICompatibleModel({ baseUrl: `${s.origin}/v1`, model: "m", stream: true }, {});
    const r = await m.complete(request);
    expect(r.message.content).toBe("héllo ✓");
    expect(r.usage.total_tokens).toBe(12);
  });
});
