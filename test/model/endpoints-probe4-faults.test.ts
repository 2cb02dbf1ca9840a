import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { checkEndpoint } from "../../src/model/check.ts";
import { toModelError } from "../../src/model/error-map.ts";
import { ModelError } from "../../src/model/errors.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { withRetries } from "../../src/model/retry.ts";
import { rateLimitResetMs } from "../../src/model/retry-after.ts";
import type { ChatRequest } from "../../src/model/types.ts";
import { listenLoopback } from "../helpers/loopback.ts";

/**
 * The client against what real endpoints and the proxies before them answer when something is wrong: a body that
 * is an event stream to a whole call, OpenAI's 401/403 and rate-limit headers, FastAPI's error shape, HTML pages,
 * bodies that are not JSON or nest too deep, escape sequences in a server's text, TLS failures.
 */
const request: ChatRequest = { messages: [{ role: "user", content: "hi" }] };
const KEY = "sk-probe4-secret-0123456789abcdef";
const chunk = (delta: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: "m1", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
const modelList = { object: "list", data: [{ id: "m1", object: "model", max_model_len: 4096 }] };

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

type Reply = (res: ServerResponse, req: IncomingMessage) => void;
/** A fake endpoint: `models` answers GET /v1/models (default: the list), `chat` every POST. */
async function serve(chat: Reply, models?: Reply) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url?.startsWith("/v1/models")) {
        if (models) return models(res, req);
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify(modelList));
      }
      chat(res, req);
    });
  });
  const l = await listenLoopback(server);
  closers.push(l.close);
  return l.url;
}
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  };
/** An event stream that sends one chunk and then nothing, never ending. */
const stalledStream: Reply = (res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(chunk({ role: "assistant", content: "a" }));
};
const fail = (m: OpenAICompatibleModel) =>
  m.complete(request).then(
    () => {
      throw new Error("the call succeeded");
    },
    (e: unknown) => e as ModelError,
  );
/**
 * Generous limits by default: the fake server shares this process's event loop, so under load a short limit would
 * turn a 401 or an HTML page into a `timeout`. Only the stall tests shorten the limit they are about.
 */
const GENEROUS = { connect: 5, first_byte: 30, idle: 30, attempt: 30 };
const client = (url: string, opts: Partial<ConstructorParameters<typeof OpenAICompatibleModel>[0]> = {}, env = {}) =>
  new OpenAICompatibleModel({ baseUrl: url, model: "m1", ...opts, timeouts: { ...GENEROUS, ...opts.timeouts } }, env);

describe("a whole call is bounded to its last byte", () => {
  it("an event stream answering a whole call that stalls is an attempt timeout, not a hang", async () => {
    const url = await serve(stalledStream);
    // Only the attempt limit is short: connecting and the model list keep their generous limits, so the call can end
    // only at the attempt limit.
    const err = await fail(client(url, { timeouts: { attempt: 1 } }));
    expect(err.kind).toBe("timeout");
    expect(err.message).toMatch(/attempt timeout of 1 s/);
  }, 15_000);

  it("a model list that stalls mid-body leaves the window unknown and the call goes on", async () => {
    const url = await serve(
      json(200, { choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] }),
      stalledStream,
    );
    // The model list is bounded by connect + first_byte (5 + 1 s); connect keeps its generous limit. The call's own
    // look-up and listModels wait side by side, so the test waits for the limit once.
    const m = client(url, { timeouts: { first_byte: 1 } });
    const [r, err] = await Promise.all([m.complete(request), m.listModels().catch((e: ModelError) => e)]);
    expect(r.message.content).toBe("ok");
    expect(r.context_window).toBeUndefined();
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).kind).toBe("timeout");
    expect((err as ModelError).message).toMatch(/no complete model list within 6 s/);
  }, 30_000);
});

describe("a refused key names the variable it was read from, never the key", () => {
  const refusal = {
    error: { message: `Incorrect API key provided: ${KEY}.`, type: "invalid_request_error", code: "invalid_api_key" },
  };
  it("401 with the key set", async () => {
    const url = await serve(json(401, refusal));
    const err = await fail(client(url, { apiKeyEnv: "MY_ENDPOINT_KEY" }, { MY_ENDPOINT_KEY: KEY }));
    expect(err.kind).toBe("unauthorized");
    expect(err.message).toMatch(/refused the API key \(HTTP 401\) read from \$MY_ENDPOINT_KEY/);
    expect(err.message).not.toContain(KEY);
    expect(err.message).not.toContain("OPENAI_API_KEY");
  });
  it("401 with the variable unset says no key was sent", async () => {
    const url = await serve(json(401, { error: { message: "You didn't provide an API key.", type: "invalid_request_error" } }));
    const err = await fail(client(url, { apiKeyEnv: "MY_ENDPOINT_KEY" }, {}));
    expect(err.message).toMatch(/none was sent, as \$MY_ENDPOINT_KEY is not set/);
  });
  it("403 says what the server refused (access to the model), with the key's variable", async () => {
    const url = await serve(
      json(403, {
        error: {
          message: `Project does not have access to model m1 (key ${KEY})`,
          type: "invalid_request_error",
          code: "model_not_found",
        },
      }),
    );
    const err = await fail(client(url, {}, { OPENAI_API_KEY: KEY }));
    expect(err.kind).toBe("unauthorized");
    expect(err.message).toMatch(
      /refused access to model "m1" with the key in \$OPENAI_API_KEY \(HTTP 403\): Project does not have access/,
    );
    expect(err.message).not.toContain(KEY);
  });
});

describe("429: OpenAI's x-ratelimit-reset-* headers are the wait when no Retry-After is sent", () => {
  it("reads Go-style durations, the spent limit deciding", () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(rateLimitResetMs(h({ "x-ratelimit-reset-requests": "1m30s", "x-ratelimit-remaining-requests": "0" }))).toBe(90_000);
    expect(
      rateLimitResetMs(
        h({
          "x-ratelimit-reset-requests": "20s",
          "x-ratelimit-remaining-requests": "4",
          "x-ratelimit-reset-tokens": "250ms",
          "x-ratelimit-remaining-tokens": "0",
        }),
      ),
    ).toBe(250);
    expect(rateLimitResetMs(h({ "x-ratelimit-reset-requests": "2s", "x-ratelimit-reset-tokens": "6m0s" }))).toBe(360_000);
    expect(rateLimitResetMs(h({ "x-ratelimit-reset-tokens": "1.5" }))).toBe(1500);
    expect(rateLimitResetMs(h({ "x-ratelimit-reset-tokens": "soon" }))).toBeUndefined();
    expect(rateLimitResetMs(h({}))).toBeUndefined();
  });
  it("the retry waits for the reset (capped at a minute), where backoff alone would give up first", async () => {
    let calls = 0;
    const url = await serve((res) => {
      calls++;
      if (calls === 1)
        return json(
          429,
          { error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } },
          { "x-ratelimit-reset-requests": "12s", "x-ratelimit-remaining-requests": "0" },
        )(res, undefined as never);
      json(200, { choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] })(res, undefined as never);
    });
    const waits: number[] = [];
    const m = withRetries(client(url), {
      maxAttempts: 3,
      baseDelayMs: 10,
      maxDelayMs: 100,
      maxServerDelayMs: 60_000,
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const r = await m.complete(request);
    expect(r.attempts).toBe(2);
    expect(waits).toEqual([12_000]);
  });
  it("Retry-After still wins over the reset headers", async () => {
    const url = await serve(
      json(
        429,
        { error: { message: "slow down", type: "requests" } },
        { "retry-after": "3", "x-ratelimit-reset-requests": "40s" },
      ),
    );
    const err = await fail(client(url));
    expect(err.retryAfterMs).toBe(3000);
  });
});

describe("error bodies that are not OpenAI's shape", () => {
  it("FastAPI's {detail: Not Found} (a base URL without /v1 on vLLM) is shown, pointing at --base-url", async () => {
    const url = await serve(json(404, { detail: "Not Found" }));
    const err = await fail(client(url));
    expect(err.kind).toBe("unknown_model");
    expect(err.message).toMatch(/answered 404 for model "m1": Not Found\. Check --base-url/);
    expect(err.message).not.toMatch(/no body/);
  });
  it("a model that does not exist still names the model, not the base URL", async () => {
    const url = await serve(
      json(404, { error: { message: "The model `m1` does not exist.", type: "NotFoundError", code: 404 } }),
    );
    const err = await fail(client(url));
    expect(err.message).toMatch(/does not exist\. Check --model against `hone models check`/);
  });
  it("a deeply nested error message is a refusal with its status, not a stack overflow", async () => {
    const deep = `${"[".repeat(300_000)}${"]".repeat(300_000)}`;
    const url = await serve(json(400, `{"error":{"message":${deep},"type":"x","code":400}}`));
    const err = await fail(client(url));
    expect(err.kind).toBe("bad_request");
    expect(err.status).toBe(400);
    expect(err.message).not.toMatch(/call stack/);
    expect(err.message.length).toBeLessThan(1000);
  });
  it("a deeply nested error event in a stream is an unreadable answer, not an unreachable server", async () => {
    const deep = `${"[".repeat(300_000)}${"]".repeat(300_000)}`;
    const url = await serve((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: {"error":{"message":${deep}}}\n\ndata: [DONE]\n\n`);
    });
    const err = await fail(client(url, { stream: true, timeouts: { attempt: 10, first_byte: 10, idle: 10 } }));
    expect(err.kind).toBe("bad_response");
    expect(err.message).toMatch(/sent an answer hone cannot read/);
  });
  it("a proxy's HTML 502 page is shown as its title", async () => {
    const page =
      "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
    const url = await serve((res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end(page);
    });
    const err = await fail(client(url));
    expect(err.kind).toBe("server_error");
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/failed with HTTP 502: 502 Bad Gateway \(an HTML page\)$/);
  });
  it("a 200 that is a web page, not a completion, says so and points at --base-url", async () => {
    const url = await serve((res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><html><head><title>Open WebUI</title></head></html>");
    });
    const err = await fail(client(url));
    expect(err.kind).toBe("bad_response");
    expect(err.message).toMatch(/something other than a JSON completion \(<!doctype html>.*is --base-url the API's/);
  });
  it("a 200 whose JSON is cut short is an unreadable answer, not an unreachable server", async () => {
    const url = await serve(json(200, '{"choices":[{"message":{"role":"assis'));
    const err = await fail(client(url));
    expect(err.kind).toBe("bad_response");
    expect(err.message).toMatch(/sent an answer hone cannot read: .*JSON/);
  });
});

describe("a server's text never drives the terminal", () => {
  const ESC = "\u001b]0;owned\u0007\u001b[2J";
  it("control characters in an error message are written out as escapes", async () => {
    const url = await serve(json(500, { error: { message: `boom ${ESC}\rover`, type: "x" } }));
    const err = await fail(client(url));
    expect(err.message).not.toMatch(/[\u001b\u0007\r]/);
    expect(err.message).toContain("\\u001b]0;owned\\u0007");
  });
  it("model ids in hone models check's report are one printable line each", async () => {
    const url = await serve(json(200, {}), json(200, { object: "list", data: [{ id: `evil${ESC}\nid` }] }));
    const report = await checkEndpoint({ baseUrl: url, model: "m1" }, {});
    expect(report.ok).toBe(false);
    const detail = report.steps[0]?.detail ?? "";
    expect(detail).toMatch(/not among the served models: evil\\u001b/);
    expect(detail).not.toMatch(/[\u001b\u0007\n]/);
  });
});

describe("TLS failures say what to do", () => {
  it("https to a server that speaks plain HTTP suggests http://", async () => {
    const url = await serve(json(200, modelList));
    const err = await fail(client(url.replace("http://", "https://"), { timeouts: { connect: 5, attempt: 10 } }));
    expect(err.kind).toBe("unreachable");
    expect(err.message).toMatch(/did not answer in TLS: if it serves plain HTTP, use http:\/\//);
  });
  it("a certificate the client does not trust names NODE_EXTRA_CA_CERTS", () => {
    const cause = Object.assign(new Error("self-signed certificate"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" });
    const err = toModelError(new OpenAI.APIConnectionError({ cause }), "https://llm.example/v1/chat/completions", "m1");
    expect(err.kind).toBe("unreachable");
    expect(err.message).toMatch(/self-signed certificate\. The server's TLS certificate was not accepted: .*NODE_EXTRA_CA_CERTS/);
  });
  it("a host name that does not resolve says so", () => {
    const cause = Object.assign(new Error("getaddrinfo ENOTFOUND llm.invalid"), { code: "ENOTFOUND" });
    const err = toModelError(new OpenAI.APIConnectionError({ cause }), "http://llm.invalid/v1/chat/completions", "m1");
    expect(err.message).toMatch(/ENOTFOUND llm\.invalid\. The host name in --base-url does not resolve/);
  });
});

describe("a server that ignores stream: true", () => {
  it("answers a streamed call with one whole completion, which is taken as the answer", async () => {
    const url = await serve(
      json(200, {
        choices: [
          {
            message: {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      }),
    );
    const r = await client(url, { stream: true, timeouts: { attempt: 10, first_byte: 10, idle: 10 } }).complete(request);
    expect(r.finish_reason).toBe("tool_calls");
    expect(r.message.tool_calls).toEqual([{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }]);
    expect(r.usage.total_tokens).toBe(7);
  });
});

describe("hone models check's report never carries the base URL's password", () => {
  it("the report's baseUrl (printed by --json) has the password taken out", async () => {
    const url = await serve(json(200, {}));
    const withPassword = url.replace("http://", "http://user:hunter2-probe4@");
    const report = await checkEndpoint({ baseUrl: withPassword, model: "m1" }, {});
    expect(JSON.stringify(report)).not.toContain("hunter2-probe4");
    expect(report.baseUrl).toBe(url.replace("http://", "http://user:***@"));
  });
});
