import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decideDiscoveryStep, extractBlock, perturbBlock } from "../../src/model/offline/discovery-executor.ts";
import { defaultHints, parseHints } from "../../src/model/offline/hints.ts";
import { rng } from "../../src/model/offline/rng.ts";
import { type OfflineServer, startOfflineServer } from "../../src/model/offline/server.ts";
import { OpenAICompatibleModel } from "../../src/model/openai-compatible.ts";
import type { ChatRequest } from "../../src/model/types.ts";

const tools = ["view_program", "edit_program", "evaluate_program", "load_skill", "finish"].map((name) => ({
  type: "function" as const,
  function: { name, description: name, parameters: { type: "object" } },
}));
const block = "a = 0.5\nb = 0.25 * 2.0\nn = 8\n";
const program = `import x\n# EVOLVE-BLOCK-START\n${block}# EVOLVE-BLOCK-END\n`;

let server: OfflineServer;
beforeAll(async () => {
  server = await startOfflineServer();
});
afterAll(() => server.close());

describe("offline model", () => {
  it("streams the same answer it gives whole (--stream with the offline model)", async () => {
    const request: ChatRequest = { messages: [{ role: "user", content: "go" }], tools, sampling: { seed: 3 } };
    const whole = await new OpenAICompatibleModel({ baseUrl: server.url, model: "offline" }, {}).complete(request);
    const streamed = await new OpenAICompatibleModel({ baseUrl: server.url, model: "offline", stream: true }, {}).complete(
      request,
    );
    expect({ ...streamed, latency_ms: 0 }).toEqual({ ...whole, latency_ms: 0 });
    expect(streamed.usage.total_tokens).toBeGreaterThan(0);
  });

  it("serves the OpenAI model list and refuses unknown models like a real server", async () => {
    const list = await (await fetch(`${server.url}/models`)).json();
    expect(list.data[0].id).toBe("offline");
    const res = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-x", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toMatch(/does not exist/);
  });

  it("acts as a local-search executor: skills, view, evaluate, then edits of the best block", () => {
    const base: ChatRequest = {
      messages: [
        { role: "system", content: "sys\n- `discovery`: how" },
        { role: "user", content: "task" },
      ],
      tools,
      sampling: { seed: 1, temperature: 0.7 },
    };
    expect(decideDiscoveryStep(base).name).toBe("load_skill");
    const afterSkill: ChatRequest = {
      ...base,
      messages: [
        ...base.messages,
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "1", type: "function", function: { name: "load_skill", arguments: '{"name":"discovery"}' } }],
        },
        { role: "tool", tool_call_id: "1", content: "# Skill" },
      ],
    };
    expect(decideDiscoveryStep(afterSkill).name).toBe("view_program");
    const afterView: ChatRequest = {
      ...afterSkill,
      messages: [
        ...afterSkill.messages,
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "2", type: "function", function: { name: "view_program", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "2", content: program },
      ],
    };
    expect(decideDiscoveryStep(afterView).name).toBe("evaluate_program");
    const afterEval: ChatRequest = {
      ...afterView,
      messages: [
        ...afterView.messages,
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "3", type: "function", function: { name: "evaluate_program", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "3", content: JSON.stringify({ valid: true, score: 1, evaluations_left: 4 }) },
      ],
    };
    const edit = decideDiscoveryStep(afterEval);
    expect(edit.name).toBe("edit_program");
    expect(edit.args.block).not.toBe(block);
    expect(String(edit.args.block)).toContain("n = 8");
    expect(decideDiscoveryStep(afterEval)).toEqual(edit);
  });

  it("is deterministic for a seed and differs across seeds and temperatures", () => {
    const a = perturbBlock(block, rng(1), 0.7, defaultHints);
    expect(perturbBlock(block, rng(1), 0.7, defaultHints)).toBe(a);
    expect(perturbBlock(block, rng(2), 0.7, defaultHints)).not.toBe(a);
    expect(perturbBlock(block, rng(1), 1.5, defaultHints)).not.toBe(a);
    expect(perturbBlock(block, rng(1), 0.7, { ...defaultHints, step_scale: 0.5 })).not.toBe(a);
  });

  it("never perturbs integer literals", () => {
    for (let s = 0; s < 20; s++)
      expect(perturbBlock(block, rng(s), 1, { ...defaultHints, literals_per_edit: 8 })).toContain("n = 8");
  });

  it("reads hints from prompts and skills", () => {
    expect(
      parseHints(["hone-hint: step_scale=0.3\nhone-hint: literals_per_edit=1", "hone-hint: load_skills=false"]),
    ).toMatchObject({ step_scale: 0.3, literals_per_edit: 1, load_skills: false });
    expect(parseHints(["hone-hint: step_scale=-1"]).step_scale).toBe(defaultHints.step_scale);
  });

  it("finishes when the budget is spent", () => {
    const r: ChatRequest = {
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "Starting score: 1.0" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "2", type: "function", function: { name: "view_program", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "2", content: program },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "3", type: "function", function: { name: "evaluate_program", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "3", content: JSON.stringify({ valid: true, score: 1, evaluations_left: 0 }) },
      ],
      tools,
    };
    expect(decideDiscoveryStep(r).name).toBe("finish");
    expect(extractBlock(program)).toBe(block);
  });

  it("answers over HTTP through the real client with tool calls and usage", async () => {
    const m = new OpenAICompatibleModel({ baseUrl: server.url, model: "offline" }, {});
    const res = await m.complete({
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "t" },
      ],
      tools,
      sampling: { seed: 3 },
    });
    expect(res.message.tool_calls[0]?.function.name).toBe("view_program");
    expect(res.usage.total_tokens).toBeGreaterThan(0);
  });

  it("adds the configured latency", async () => {
    const slow = await startOfflineServer({ latencyMs: 150 });
    try {
      const m = new OpenAICompatibleModel({ baseUrl: slow.url, model: "offline" }, {});
      const res = await m.complete({ messages: [{ role: "user", content: "t" }], tools });
      expect(res.latency_ms).toBeGreaterThanOrEqual(140);
    } finally {
      await slow.close();
    }
  });
});
