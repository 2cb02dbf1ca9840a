import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import { runAgentLoop } from "../../src/runtime/agent-loop.ts";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import type { Middleware } from "../../src/runtime/middleware.ts";
import { truncateMiddle } from "../../src/runtime/middlewares/long-tool-output.ts";
import { stallRestart } from "../../src/runtime/middlewares/stall-restart.ts";
import { runRollout } from "../../src/runtime/rollout.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { CIRCLE_PACKING, INITIAL_HARNESS } from "../helpers/fixtures.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

const program = "# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n";
/** Scores the value of X; X < 0 is invalid. */
const fakeEvaluate = async (p: string): Promise<Evaluation> => {
  const x = Number(/X = (-?[0-9.]+)/.exec(p)?.[1]);
  return x < 0
    ? { valid: false, reason: "negative", metrics: {}, artifacts: {}, seconds: 0 }
    : { valid: true, score: x, metrics: { combined_score: x }, artifacts: {}, seconds: 0 };
};
const env = (maxEvals = 5) =>
  new DiscoveryEnvironment({
    task: { metric: "combined_score", direction: "maximize" },
    startProgram: program,
    maxEvals,
    evaluate: fakeEvaluate,
  });
const tools = ["view_program", "edit_program", "evaluate_program", "finish"].map((name) => ({
  type: "function" as const,
  function: { name, description: name, parameters: { type: "object" } },
}));
const harness = { systemPrompt: "sys", maxIterations: 10, skills: [], stopTools: ["finish"] };
const call = (name: string, args: unknown = {}) => ({ name, arguments: typeof args === "string" ? args : JSON.stringify(args) });

function loop(
  steps: ReturnType<typeof call>[][],
  extra: { middlewares?: Middleware[]; maxEvals?: number; maxIterations?: number } = {},
) {
  const e = env(extra.maxEvals);
  const model = scriptedModel(steps);
  const trajectory = new MemoryTrajectory();
  const run = runAgentLoop({
    harness: { ...harness, maxIterations: extra.maxIterations ?? 10 },
    model,
    env: e,
    tools,
    taskMessage: "task",
    sampling: { seed: 1 },
    middlewares: extra.middlewares ?? [],
    trajectory,
    budget: () => ({ used: e.used, left: e.left, total: e.total }),
    deadline: performance.now() + 30_000,
  });
  return { run, env: e, model, trajectory };
}

describe("agent loop", () => {
  it("records a model's refusal on its trajectory event, beside the content it also stands as", async () => {
    const refusal = "I can't help with that.";
    const e = env();
    const trajectory = new MemoryTrajectory();
    const refusing = {
      id: "refusing",
      async complete() {
        return {
          message: { content: refusal, tool_calls: [], refusal },
          finish_reason: "stop",
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          latency_ms: 1,
          attempts: 1,
          model: "refusing",
        };
      },
    };
    await runAgentLoop({
      harness: { ...harness, maxIterations: 2 },
      model: refusing,
      env: e,
      tools,
      taskMessage: "task",
      sampling: { seed: 1 },
      middlewares: [],
      trajectory,
      budget: () => ({ used: e.used, left: e.left, total: e.total }),
      deadline: performance.now() + 30_000,
    });
    const said = trajectory.events.filter((ev) => ev.type === "assistant");
    expect(said.length).toBeGreaterThan(0);
    for (const ev of said) expect(ev).toMatchObject({ content: refusal, refusal });
  });

  it("dispatches tools, keeps the best valid program and stops on finish", async () => {
    const { run, env: e } = loop([
      [call("edit_program", { block: "X = 3.0" })],
      [call("evaluate_program")],
      [call("edit_program", { block: "X = -1.0" })],
      [call("evaluate_program")],
      [call("finish")],
    ]);
    const r = await run;
    expect(r.stopReason).toBe("finish");
    expect(e.best?.score).toBe(3);
    expect(e.records.map((x) => x.evaluation.valid)).toEqual([true, false]);
  });

  it("sends malformed tool-call arguments back to the model as a tool error and goes on", async () => {
    const { run, trajectory } = loop([[call("edit_program", "{not json")], [call("finish")]]);
    const r = await run;
    expect(r.stopReason).toBe("finish");
    const result = trajectory.events.find((e) => e.type === "tool_result");
    expect(result).toMatchObject({ error: true });
    expect(String(result?.output)).toMatch(/not valid JSON/);
  });

  it("does not stop on a stop tool's call it refused: the model is told and may call it again", async () => {
    // A stop tool (NexAU's stop_tools) called with arguments that are no JSON object was no action: ending the
    // rollout there dropped what the call was to say (its answer), and the model never saw the error.
    const {
      run,
      env: e,
      trajectory,
    } = loop([
      [call("finish", "{not json")],
      [call("edit_program", { block: "X = 2.0" })],
      [call("evaluate_program")],
      [call("finish")],
    ]);
    const r = await run;
    expect(r.stopReason).toBe("finish");
    expect(e.best?.score).toBe(2);
    const results = trajectory.events.filter((ev) => ev.type === "tool_result");
    expect(results[0]).toMatchObject({ name: "finish", error: true, refused: true });
    expect(results.map((ev) => ev.name)).toEqual(["finish", "edit_program", "evaluate_program", "finish"]);
  });

  it("answers an unknown tool with an error naming the real tools", async () => {
    const { run, trajectory } = loop([[call("teleport")], [call("finish")]]);
    await run;
    expect(String(trajectory.events.find((e) => e.type === "tool_result")?.output)).toMatch(
      /no tool named "teleport"; the tools are view_program/,
    );
  });

  it("stops at the evaluator budget", async () => {
    const { run, env: e } = loop([[call("evaluate_program")]], { maxEvals: 3 });
    const r = await run;
    expect(r.stopReason).toBe("budget_spent");
    expect(e.used).toBe(3);
  });

  it("stops at the iteration cap", async () => {
    const { run } = loop([[call("view_program")]], { maxIterations: 4 });
    const r = await run;
    expect(r.stopReason).toBe("iteration_cap");
    expect(r.modelCalls).toBe(4);
  });

  it("nudges a text-only reply, then stops", async () => {
    const { run } = loop([[]]);
    const r = await run;
    expect(r.stopReason).toBe("model_stopped");
    expect(r.modelCalls).toBe(3);
  });

  it("runs before-hooks first→last and after-hooks last→first (NexAU order)", async () => {
    const order: string[] = [];
    const mw = (name: string): Middleware => ({
      name,
      beforeModel: () => void order.push(`${name}.beforeModel`),
      afterModel: () => void order.push(`${name}.afterModel`),
      beforeTool: () => void order.push(`${name}.beforeTool`),
      afterTool: () => void order.push(`${name}.afterTool`),
    });
    const { run } = loop([[call("finish")]], { middlewares: [mw("a"), mw("b")] });
    await run;
    expect(order).toEqual([
      "a.beforeModel",
      "b.beforeModel",
      "b.afterModel",
      "a.afterModel",
      "a.beforeTool",
      "b.beforeTool",
      "b.afterTool",
      "a.afterTool",
    ]);
  });

  it("lets an after-tool hook replace the output and records the intervention", async () => {
    const shout: Middleware = { name: "shout", afterTool: (_v, _c, out) => ({ output: out.toUpperCase(), note: "shouted" }) };
    const { run, trajectory } = loop([[call("view_program")], [call("finish")]], { middlewares: [shout] });
    await run;
    expect(String(trajectory.events.find((e) => e.type === "tool_result")?.output)).toMatch(/^CURRENT PROGRAM/);
    expect(trajectory.events).toContainEqual(
      expect.objectContaining({ type: "middleware", middleware: "shout", note: "shouted" }),
    );
  });
});

describe("built-in middlewares", () => {
  it("stall restart reverts to the best program after S evaluations without progress, at most R times", async () => {
    const e = env(20);
    await e.call("edit_program", { block: "X = 5.0" });
    await e.call("evaluate_program", {});
    const mw = stallRestart(
      { after_evaluations: 2, max_restarts: 1 },
      { revertToBest: () => e.revertToBest(), bestScore: () => e.best?.score },
    );
    const view = { iteration: 1, messages: [], budget: { used: 0, left: 0, total: 0 } };
    const evalCall = { name: "evaluate_program", args: {} };
    await e.call("edit_program", { block: "X = 1.0" });
    const notImproved = JSON.stringify({ improved: false });
    expect(await mw.afterTool?.(view, evalCall, notImproved)).toBeUndefined();
    const r = await mw.afterTool?.(view, evalCall, notImproved);
    expect(r && "output" in r ? r.output : "").toMatch(/reverted to the best version \(score 5\)/);
    expect(e.program).toContain("X = 5.0");
    await e.call("edit_program", { block: "X = 2.0" });
    await mw.afterTool?.(view, evalCall, notImproved);
    expect(await mw.afterTool?.(view, evalCall, notImproved)).toBeUndefined();
    expect(e.program).toContain("X = 2.0");
  });

  it("long tool output keeps the head and the tail", () => {
    const text = `${"a".repeat(500)}${"b".repeat(500)}`;
    const out = truncateMiddle(text, { max_chars: 300, head_chars: 100, tail_chars: 50 });
    expect(out.startsWith("a".repeat(100))).toBe(true);
    expect(out.endsWith("b".repeat(50))).toBe(true);
    expect(out).toContain("850 characters cut");
  });

  it("budget reminder speaks from N calls left, once per count", async () => {
    const h = loadHarness(INITIAL_HARNESS);
    const task = loadTaskFolder(CIRCLE_PACKING);
    const trajectory = new MemoryTrajectory();
    const model = scriptedModel([[call("evaluate_program")]]);
    await runRollout({ harness: h, task, model, evaluate: fakeEvaluate, maxEvals: 5, seed: 0, trajectory });
    const reminders = trajectory.events
      .filter((e) => e.type === "middleware" && e.middleware === "budget_reminder")
      .map((e) => e.note);
    expect(reminders).toEqual(["reminded at 3 left", "reminded at 2 left", "reminded at 1 left"]);
    const lastRequest = model.requests.at(-1);
    expect(lastRequest?.messages.filter((m) => m.role === "user" && m.content.startsWith("Budget:")).length).toBe(3);
  });
});
