import { createServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { checkEndpoint, PING_MAX_TOKENS } from "../../src/model/check.ts";
import type { Dialect } from "../../src/model/dialect.ts";
import { listenLoopback } from "../helpers/loopback.ts";

/**
 * `hone models check` against reasoning models, whose thinking is paid from the answer's budget (max_tokens,
 * max_completion_tokens): with too small a budget they stop with finish_reason "length", an empty answer and no
 * tool call, as OpenAI's o-series and gpt-5 and vLLM's thinking models (Qwen3, the README's example) do.
 */
const THINKING = 300;
const CALL = 12;

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

/** A reasoning model that thinks THINKING tokens, then calls the tool if the answer's budget still allows. */
async function thinkingServer(model: string, hidden: boolean, thinking = THINKING) {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(v));
    };
    if (req.method === "GET") return json(200, { object: "list", data: [{ id: model, object: "model" }] });
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    const budget = (body.max_completion_tokens ?? body.max_tokens ?? 100_000) as number;
    const fits = budget >= thinking + CALL;
    const thought = Math.min(budget, thinking);
    const message = {
      role: "assistant",
      content: fits ? null : "",
      ...(hidden ? {} : { reasoning: "think ".repeat(Math.ceil(thought / 2)) }),
      ...(fits
        ? {
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "ping", arguments: JSON.stringify({ word: "pong" }) } },
            ],
          }
        : {}),
    };
    const completion = fits ? thinking + CALL : budget;
    json(200, {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model,
      choices: [{ index: 0, message, finish_reason: fits ? "tool_calls" : "length" }],
      usage: {
        prompt_tokens: 60,
        completion_tokens: completion,
        total_tokens: 60 + completion,
        ...(hidden ? { completion_tokens_details: { reasoning_tokens: thought } } : {}),
      },
    });
  });
  const l = await listenLoopback(server);
  closers.push(l.close);
  return l.url;
}

describe("hone models check on a reasoning model", () => {
  const cases: [string, Dialect, boolean][] = [
    ["o4-mini", "openai", true],
    ["Qwen/Qwen3-8B", "vllm", false],
  ];
  for (const [model, dialect, hidden] of cases)
    it(`passes for ${model} (${dialect}), which thinks before it calls the tool`, async () => {
      const url = await thinkingServer(model, hidden);
      const report = await checkEndpoint({ baseUrl: url, model, dialect }, {});
      expect(report.steps.at(-1)?.detail).toMatch(/^called ping/);
      expect(report.ok).toBe(true);
    });

  it("says the model ran out of its answer's tokens, not that tool calling may be off, when it thinks past them", async () => {
    const url = await thinkingServer("o4-mini", true, 50_000);
    const report = await checkEndpoint({ baseUrl: url, model: "o4-mini", dialect: "openai" }, {});
    expect(report.ok).toBe(false);
    const detail = report.steps.at(-1)?.detail ?? "";
    expect(detail).toContain(`used all ${PING_MAX_TOKENS} tokens of its answer without calling the tool`);
    expect(detail).toContain(`finish_reason "length", ${PING_MAX_TOKENS} of them reasoning`);
    expect(detail).not.toMatch(/tool calling may be off/);
  });
});

describe("hone models check on an endpoint without a model list (Azure OpenAI's deployment URLs)", () => {
  /** Azure: no /models under a deployment (404), the deployment's chat completions with api-version and api-key. */
  async function azure() {
    const server = createServer(async (req, res) => {
      for await (const _ of req);
      const url = new URL(req.url ?? "", "http://x");
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(v));
      };
      if (req.headers["api-key"] !== "azure-key-0123" || url.searchParams.get("api-version") !== "2024-10-21")
        return json(401, { error: { code: "401", message: "Access denied due to invalid subscription key" } });
      if (req.method !== "POST" || url.pathname !== "/openai/deployments/gpt41/chat/completions")
        return json(404, { error: { code: "404", message: "Resource not found" } });
      const call = { id: "call_1", type: "function", function: { name: "ping", arguments: '{"word":"pong"}' } };
      json(200, {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "gpt-4.1-2025-04-14",
        choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [call] }, finish_reason: "tool_calls" }],
        usage: { prompt_tokens: 60, completion_tokens: 12, total_tokens: 72 },
      });
    });
    const l = await listenLoopback(server);
    closers.push(l.close);
    return l.url.replace(/\/v1$/, "");
  }
  const env = { OPENAI_API_KEY: "azure-key-0123" };

  it("goes on to the tool call, which passes where the deployment answers", async () => {
    const origin = await azure();
    const baseUrl = `${origin}/openai/deployments/gpt41?api-version=2024-10-21`;
    const report = await checkEndpoint({ baseUrl, model: "gpt-4.1", dialect: "openai" }, env);
    expect(report.steps.map((s) => s.ok)).toEqual([true, true]);
    expect(report.steps[0]?.detail).toMatch(/has no model list \(HTTP 404\)/);
    expect(report.ok).toBe(true);
  });

  it("and fails there, naming the URL, where it does not", async () => {
    const origin = await azure();
    const baseUrl = `${origin}/openai/deployments/missing?api-version=2024-10-21`;
    const report = await checkEndpoint({ baseUrl, model: "gpt-4.1", dialect: "openai" }, env);
    expect(report.ok).toBe(false);
    expect(report.steps.at(-1)?.detail).toContain("/openai/deployments/missing/chat/completions?api-version=2024-10-21");
  });
});
