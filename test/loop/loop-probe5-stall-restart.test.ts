import { describe, expect, it } from "vitest";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { longToolOutput } from "../../src/runtime/middlewares/long-tool-output.ts";
import { stallRestart } from "../../src/runtime/middlewares/stall-restart.ts";
import { LOOP_PROGRAM, loopRollout } from "../helpers/loop-rollout.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });

async function rollout(steps: ReturnType<typeof call>[][]) {
  const env = new DiscoveryEnvironment({
    task: { metric: "score", direction: "maximize" },
    startProgram: LOOP_PROGRAM,
    startEvaluation: { valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 },
    maxEvals: 10,
    evaluate: async (p) => {
      const x = Number(/X = (-?[0-9.]+)/.exec(p)?.[1]);
      // Feedback as an evaluator gives it: the output passes long_tool_output's max_chars.
      return { valid: true, score: x, metrics: {}, artifacts: { feedback: "checked ".repeat(40) }, seconds: 0 };
    },
  });
  const host = { revertToBest: () => env.revertToBest(), bestScore: () => env.best?.score };
  const { result, trajectory } = await loopRollout(scriptedModel(steps), env, {
    maxIterations: 20,
    // As a package lists them: long_tool_output below stall_restart, so its afterTool runs first and cuts the
    // evaluation's JSON (its "improved" field among what is cut) before stall_restart sees it.
    middlewares: [
      stallRestart({ after_evaluations: 2, max_restarts: 2 }, host),
      longToolOutput({ max_chars: 200, head_chars: 50, tail_chars: 50 }),
    ],
  });
  const restarts = trajectory.events.filter((e) => e.type === "middleware" && e.middleware === "stall_restart");
  return { env, result, restarts };
}

describe("hone:stall_restart under hone:long_tool_output", () => {
  it("counts a new best as progress though the output it sees was cut: one evaluation without progress is no stall", async () => {
    const { env, restarts } = await rollout([
      [call("edit_program", { block: "X = 5.0\n" })],
      [call("evaluate_program")],
      [call("edit_program", { block: "X = 3.0\n" })],
      [call("evaluate_program")],
      [call("finish")],
    ]);
    expect(env.best?.score).toBe(5);
    expect(restarts).toEqual([]);
    expect(env.program).toContain("X = 3.0");
  });

  it("still restarts after S evaluations without a new best", async () => {
    const { env, restarts } = await rollout([
      [call("edit_program", { block: "X = 5.0\n" })],
      [call("evaluate_program")],
      [call("edit_program", { block: "X = 3.0\n" })],
      [call("evaluate_program")],
      [call("evaluate_program")],
      [call("finish")],
    ]);
    expect(restarts).toHaveLength(1);
    expect(env.program).toContain("X = 5.0");
  });
});
