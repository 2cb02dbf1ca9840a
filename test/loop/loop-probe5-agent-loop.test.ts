import { describe, expect, it } from "vitest";
import type { ChatModel } from "../../src/model/types.ts";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { LOOP_PROGRAM, loopRollout } from "../helpers/loop-rollout.ts";
import { checkOpenAIRequest } from "../helpers/openai-rules.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

const calls = (...names: string[]) => names.map((name) => ({ name, arguments: "{}" }));

/** One rollout of the agent loop on a program whose every evaluation scores 1, until `seconds` from now. */
async function rollout(model: ChatModel, seconds: number, trajectory = new MemoryTrajectory()) {
  const env = new DiscoveryEnvironment({
    task: { metric: "score", direction: "maximize" },
    startProgram: LOOP_PROGRAM,
    maxEvals: 5,
    evaluate: async () => ({ valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 }),
  });
  const { result } = await loopRollout(model, env, { seconds, trajectory });
  return { result, used: env.used };
}

// A time limit past 24.8 days: Node runs a timer longer than 2^31-1 ms after 1 ms, which ended the rollout at once.
describe("a time limit longer than a timer can hold (past 24.8 days)", () => {
  it.each([30 * 86_400, 1e9])("does not end a %d s rollout at once: the loop runs to the model's finish", async (seconds) => {
    const model = scriptedModel([calls("view_program"), calls("evaluate_program"), calls("finish")], undefined, {
      latencyMs: 20,
    });
    const { result, used } = await rollout(model, seconds);
    expect(result.stopReason).toBe("finish");
    expect(result.modelCalls).toBe(3);
    expect(used).toBe(1);
  });
});

// A server whose tool parser gives every call of a message the same id (and the same again next turn): the results
// could not be told apart, and a strict endpoint refused every later request.
describe("tool calls of one message that share an id", () => {
  it("each gets its own id, so every tool result answers one call and OpenAI's rules accept the next request", async () => {
    const model = scriptedModel([calls("view_program", "evaluate_program"), calls("view_program"), calls("finish")], undefined, {
      callId: () => "call_0",
    });
    const trajectory = new MemoryTrajectory();
    const { result } = await rollout(model, 30, trajectory);
    expect(result.stopReason).toBe("finish");
    for (const r of model.requests.slice(1))
      expect(checkOpenAIRequest({ model: "gpt-4.1-mini", messages: r.messages, tools: r.tools })).toBeUndefined();
    const first = trajectory.events.find((e) => e.type === "assistant") as unknown as { tool_calls: { id: string }[] };
    const ids = first.tool_calls.map((c) => c.id);
    expect(ids[0]).toBe("call_0");
    expect(new Set(ids).size).toBe(2);
    const results = trajectory.events.filter((e) => e.type === "tool_result" && e.iteration === 1).map((e) => e.id);
    expect(results).toEqual(ids);
  });
});
