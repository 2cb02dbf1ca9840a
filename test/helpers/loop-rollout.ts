import type { ChatModel } from "../../src/model/types.ts";
import { runAgentLoop } from "../../src/runtime/agent-loop.ts";
import type { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import type { Middleware } from "../../src/runtime/middleware.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";

/** A one-block program and the executor's four fixed tools, as the agent loop's tests give them. */
export const LOOP_PROGRAM = "# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n";
export const LOOP_TOOLS = ["view_program", "edit_program", "evaluate_program", "finish"].map((name) => ({
  type: "function" as const,
  function: { name, description: name, parameters: { type: "object" } },
}));

/** One rollout of the agent loop on `env` with `model`, stopping at `finish`, until `seconds` from now. */
export async function loopRollout(
  model: ChatModel,
  env: DiscoveryEnvironment,
  o: { seconds?: number; maxIterations?: number; middlewares?: Middleware[]; trajectory?: MemoryTrajectory } = {},
) {
  const trajectory = o.trajectory ?? new MemoryTrajectory();
  const result = await runAgentLoop({
    harness: { systemPrompt: "sys", maxIterations: o.maxIterations ?? 10, skills: [], stopTools: ["finish"] },
    model,
    env,
    tools: LOOP_TOOLS,
    taskMessage: "task",
    sampling: {},
    middlewares: o.middlewares ?? [],
    trajectory,
    budget: () => ({ used: env.used, left: env.left, total: env.total }),
    deadline: performance.now() + (o.seconds ?? 30) * 1000,
  });
  return { result, trajectory };
}
