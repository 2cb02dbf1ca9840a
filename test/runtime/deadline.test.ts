import { afterEach, describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import type { Harness, MiddlewareConfig, ToolSpec } from "../../src/harness/types.ts";
import { runRollout } from "../../src/runtime/rollout.ts";
import { generatedCodeHost } from "../../src/sandbox/generated-code.ts";
import type { SandboxLimits } from "../../src/sandbox/isolate.ts";
import { taskInputs } from "../../src/sandbox/tool-host.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { CIRCLE_PACKING, INITIAL_HARNESS } from "../helpers/fixtures.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

// The rollout's wall-clock limit holds against generated code that takes its own limit every time: a package may
// carry any number of middlewares whose hooks each wait out the sandbox's wall clock, and tools that do the same.
// Before, the deadline was only looked at before each model call, so 8 such middlewares held a 1 s rollout for
// 8 × the sandbox's wall clock on every hook.

const limits: SandboxLimits = { memoryMb: 32, cpuMs: 500, wallMs: 3000, maxResultChars: 10_000 };
const hang = "await new Promise(() => {}); return null;";
const evaluate = async (): Promise<Evaluation> => ({
  valid: true,
  score: 1,
  metrics: { combined_score: 1 },
  artifacts: {},
  seconds: 0,
});
const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });

const dispose: (() => void)[] = [];
afterEach(() => {
  for (const d of dispose.splice(0)) d();
});

function withGenerated(
  middlewares: number,
  hooks: string[],
  tool: string | undefined,
): { harness: Harness; generated: NonNullable<Parameters<typeof runRollout>[0]["generatedCode"]> } {
  const base = loadHarness(INITIAL_HARNESS);
  const mws: MiddlewareConfig[] = Array.from({ length: middlewares }, (_, i) => ({
    name: `slow_${i}`,
    kind: "custom",
    params: {},
    file: `middlewares/slow_${i}.js`,
    source: hooks.map((h) => `async function ${h}() { ${hang} }`).join("\n"),
  }));
  const tools: ToolSpec[] = tool
    ? [
        ...base.tools,
        {
          name: "slow_tool",
          description: "waits",
          inputSchema: { type: "object" },
          kind: "custom",
          file: "custom_tools/slow_tool.js",
          source: tool,
        },
      ]
    : base.tools;
  const harness: Harness = { ...base, tools, middlewares: [...base.middlewares, ...mws] };
  const task = loadTaskFolder(CIRCLE_PACKING);
  return {
    harness,
    generated: (env, trajectory) => {
      const host = generatedCodeHost(harness.tools, env, taskInputs(task), trajectory, { seed: 1, limits });
      dispose.push(() => host.dispose());
      return host;
    },
  };
}

async function rollout(h: ReturnType<typeof withGenerated>, steps: ReturnType<typeof call>[][], timeLimitSec: number) {
  const trajectory = new MemoryTrajectory();
  const started = performance.now();
  const outcome = await runRollout({
    harness: h.harness,
    task: loadTaskFolder(CIRCLE_PACKING),
    model: scriptedModel(steps),
    evaluate,
    maxEvals: 5,
    seed: 0,
    trajectory,
    timeLimitSec,
    generatedCode: h.generated,
  });
  return { outcome, trajectory, seconds: (performance.now() - started) / 1000 };
}

describe("the rollout's wall-clock limit against generated code", () => {
  it("eight middlewares whose every hook hangs: a 1 s rollout ends at about 1 s, not 8 × 3 s", async () => {
    const h = withGenerated(8, ["beforeModel", "afterModel", "beforeTool", "afterTool"], undefined);
    const r = await rollout(h, [[call("view_program")]], 1);
    expect(r.outcome.stopReason).toBe("time_limit");
    expect(r.seconds).toBeLessThan(2);
    const errors = r.trajectory.events.filter((e) => e.type === "middleware_error");
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => String(e.error).includes("time limit") || String(e.error).includes("wall clock"))).toBe(true);
  }, 60_000);

  it("a generated tool that hangs is stopped at the deadline, and the step's other calls are not started", async () => {
    const h = withGenerated(0, [], `async function run(ctx) { ${hang} }`);
    const r = await rollout(h, [[call("slow_tool"), call("slow_tool"), call("slow_tool"), call("slow_tool")]], 1);
    expect(r.outcome.stopReason).toBe("time_limit");
    expect(r.seconds).toBeLessThan(2);
    const results = r.trajectory.events.filter((e) => e.type === "tool_result");
    expect(results).toHaveLength(1);
    expect(String(results[0]?.output)).toContain("stopped at the rollout's time limit");
  }, 60_000);
});
