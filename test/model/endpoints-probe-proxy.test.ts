import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import { type ModelProxy, startModelProxy } from "../../src/model/proxy.ts";
import { startStrictOpenAI } from "../helpers/strict-openai.ts";

/**
 * A harness program's request through hone's one-run proxy reaches the endpoint with what changes its answer: a
 * program that says `tool_choice: "none"` (or "required"), penalties, reasoning_effort or parallel_tool_calls must
 * not have them dropped (tool_choice went on as "auto", so a program that forbade tools got tool calls).
 */
let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.map((c) => c()));
  closers = [];
});

function post(proxy: ModelProxy, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = httpRequest(
      {
        socketPath: join(proxy.socketDir, "model.sock"),
        path: "/v1/chat/completions",
        method: "POST",
        headers: { authorization: `Bearer ${proxy.token}`, "content-type": "application/json" },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      },
    );
    req.on("error", reject);
    req.end(text);
  });
}

const tools = [
  {
    type: "function",
    function: {
      name: "ping",
      description: "Answer a check.",
      parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
    },
  },
];

describe("hone's model proxy passes on what a program asks", () => {
  it("tool_choice, penalties, reasoning_effort and parallel_tool_calls reach the endpoint as the program set them", async () => {
    const f = await startStrictOpenAI({ models: ["gpt-4.1-mini", "o4-mini"] });
    closers.push(f.close);
    const chat = new OpenAICompatibleModel({ baseUrl: f.url, model: "gpt-4.1-mini", dialect: "openai" }, {});
    const proxy = await startModelProxy(chat, "gpt-4.1-mini");
    closers.push(proxy.close);
    const r = await post(proxy, {
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: "Say hi, do not call ping." }],
      tools,
      tool_choice: "none",
      presence_penalty: 0.5,
      frequency_penalty: -0.25,
      parallel_tool_calls: false,
    });
    expect(r.status).toBe(200);
    expect(f.refusals).toEqual([]);
    expect(f.requests[0]).toMatchObject({
      tool_choice: "none",
      presence_penalty: 0.5,
      frequency_penalty: -0.25,
      parallel_tool_calls: false,
    });

    const reasoner = new OpenAICompatibleModel({ baseUrl: f.url, model: "o4-mini", dialect: "openai" }, {});
    const proxy2 = await startModelProxy(reasoner, "o4-mini");
    closers.push(proxy2.close);
    await post(proxy2, {
      model: "o4-mini",
      messages: [{ role: "user", content: "Call ping." }],
      tools,
      tool_choice: "required",
      reasoning_effort: "high",
    });
    expect(f.refusals).toEqual([]);
    expect(f.requests[1]).toMatchObject({ tool_choice: "required", reasoning_effort: "high" });
  });

  it("leaves out values a server would refuse anyway (a wrong type, an unknown tool_choice or effort)", async () => {
    const f = await startStrictOpenAI({ models: ["gpt-4.1-mini"] });
    closers.push(f.close);
    const chat = new OpenAICompatibleModel({ baseUrl: f.url, model: "gpt-4.1-mini", dialect: "openai" }, {});
    const proxy = await startModelProxy(chat, "gpt-4.1-mini");
    closers.push(proxy.close);
    await post(proxy, {
      model: "gpt-4.1-mini",
      messages: [{ role: "user", content: "hi" }],
      tools,
      tool_choice: "sometimes",
      presence_penalty: "high",
      reasoning_effort: "extreme",
      parallel_tool_calls: "yes",
    });
    expect(f.refusals).toEqual([]);
    expect(f.requests[0]?.tool_choice).toBe("auto");
    for (const k of ["presence_penalty", "reasoning_effort", "parallel_tool_calls"]) expect(f.requests[0]).not.toHaveProperty(k);
  });
});
