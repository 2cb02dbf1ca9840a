import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import { modelOffered, offeredNames } from "../../src/runtime/offered-names.ts";
import { runRollout } from "../../src/runtime/rollout.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { CIRCLE_PACKING, copyOf, edit, INITIAL_HARNESS, ROOT } from "../helpers/fixtures.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

// A NexAU package's prompt names its tools as NexAU offers them (edit_solution(code), evaluate_solution(), LoadSkill);
// hone offers the model those names and runs its own tools behind them.

const NAMED = join(ROOT, "test", "fixtures", "nexau", "named-tools");
const call = (name: string, args: unknown = {}) => ({ name, arguments: JSON.stringify(args) });
/** 2 once the block holds the marker line, else 1. */
const evaluate = async (p: string): Promise<Evaluation> => {
  const score = p.includes("TUNED = True") ? 2 : 1;
  return { valid: true, score, metrics: { combined_score: score }, artifacts: {}, seconds: 0 };
};

async function rollout(harnessDir: string, steps: ReturnType<typeof call>[][], modelId?: string) {
  const model = scriptedModel(steps);
  const offline = modelId ? Object.assign(model, { id: modelId }) : model;
  const trajectory = new MemoryTrajectory();
  const task = loadTaskFolder(CIRCLE_PACKING);
  const outcome = await runRollout({
    harness: loadHarness(harnessDir),
    task,
    model: offline,
    evaluate,
    maxEvals: 5,
    seed: 0,
    trajectory,
  });
  return { model, trajectory, outcome };
}

const offeredTools = (m: ReturnType<typeof scriptedModel>) => m.requests[0]?.tools?.map((t) => t.function.name);

describe("a NexAU package's tools, offered under the package's own names", () => {
  it("runs the calls a model makes by the package's names, LoadSkill's skill_name included", async () => {
    const { model, trajectory, outcome } = await rollout(NAMED, [
      [call("edit_solution", { code: "TUNED = True" })],
      [call("evaluate_solution")],
      [call("LoadSkill", { skill_name: "discovery-optimization" })],
      [call("finish", { summary: "tuned" })],
    ]);
    expect(offeredTools(model)).toEqual(["view_program", "edit_solution", "evaluate_solution", "finish", "LoadSkill"]);
    const results = trajectory.events.filter((e) => e.type === "tool_result");
    expect(results.map((e) => [e.name, e.error])).toEqual([
      ["edit_program", false],
      ["evaluate_program", false],
      ["load_skill", false],
      ["finish", false],
    ]);
    expect(String(results[2]?.output)).toContain("# Skill: discovery-optimization");
    expect(outcome.stopReason).toBe("finish");
    expect(outcome.bestScore).toBe(2);
  });

  it("says the package's names in hone's own lines, and keeps them in the conversation it sends back", async () => {
    const { model } = await rollout(NAMED, [[call("evaluate_solution")], [call("finish", { summary: "x" })]]);
    const [system, task] = model.requests[0]?.messages ?? [];
    expect(system?.content).toContain("(load one with LoadSkill)");
    expect(task?.content).toContain("evaluator calls (evaluate_solution)");
    const last = model.requests.at(-1)?.messages ?? [];
    const called = last.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : [])).map((c) => c.function.name);
    expect(called).toEqual(["evaluate_solution"]);
  });

  it("names the offered tools when the model calls one that does not exist", async () => {
    const { trajectory } = await rollout(NAMED, [[call("edit_code", { code: "x" })], [call("finish", { summary: "x" })]]);
    const refused = trajectory.events.find((e) => e.type === "tool_result" && e.error);
    expect(String(refused?.output)).toMatch(
      /there is no tool named "edit_code"; the tools are .*edit_solution, evaluate_solution/,
    );
  });

  it("leaves hone's own packages, and hone's offline model, with hone's names", async () => {
    const own = await rollout(INITIAL_HARNESS, [[call("finish", { summary: "x" })]]);
    expect(offeredTools(own.model)).toEqual(["view_program", "edit_program", "evaluate_program", "load_skill", "finish"]);
    expect(offeredNames(loadHarness(INITIAL_HARNESS).tools)).toBeUndefined();
    const offline = await rollout(NAMED, [[call("finish", { summary: "x" })]], "http://127.0.0.1:4000/v1#offline");
    expect(offeredTools(offline.model)).toContain("edit_program");
    expect(modelOffered({ id: "http://127.0.0.1:4000/v1#qwen" }, loadHarness(NAMED).tools)?.toModel.get("edit_program")).toBe(
      "edit_solution",
    );
  });
});

describe("agent.yaml's offered_as", () => {
  it("is refused when two tools would be offered under one name", () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace("yaml_path: tools/finish.tool.yaml", "yaml_path: tools/finish.tool.yaml\n    offered_as: view_program"),
    );
    expect(() => loadHarness(dir)).toThrow(/offered two tools named "view_program"/);
  });
});
