import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { runRollout } from "../../src/runtime/rollout.ts";
import { prepareHarness } from "../../src/sandbox/check.ts";
import { generatedCodeHost } from "../../src/sandbox/generated-code.ts";
import { MAX_TOOL_LOG_EVENTS, newPythonState, pythonCtx } from "../../src/sandbox/python-tool-host.ts";
import { MAX_STAGED_EVENTS, taskInputs } from "../../src/sandbox/tool-host.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { copyOf, edit, makeTask, ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

// A generated Python tool's ctx.stage_edit() and ctx.log() were each a line of the rollout's trajectory with no cap
// (a tool may make 1,000 ctx calls a call, every call of the rollout), while JavaScript tools' staged edits are
// capped. Python tools now record the first MAX_STAGED_EVENTS staged edits and MAX_TOOL_LOG_EVENTS log lines of a
// rollout one by one, then one line of each kind says the rest are not recorded; every edit still applies.

const PROGRAM = "import math\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\nprint(X)\n";

function hostSide() {
  const env = new DiscoveryEnvironment({
    task: { metric: "combined_score", direction: "maximize" },
    startProgram: PROGRAM,
    maxEvals: 3,
    evaluate: async () => ({ valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 }),
  });
  const trajectory = new MemoryTrajectory();
  const state = newPythonState();
  const task = { dir: tempDir(), secrets: [] };
  // Two tools of one rollout share its state, as pythonTools() makes them.
  const tool = (name: string) => pythonCtx({ env, task, trajectory, tool: name, maxProbes: 2, state });
  return { env, trajectory, a: tool("a"), b: tool("b") };
}

const ofType = (t: MemoryTrajectory, type: string) => t.events.filter((e) => e.type === type);

describe("Python tools' staged edits and log lines in the trajectory (host side)", () => {
  it("records the first MAX_STAGED_EVENTS staged edits of a rollout, then one note; every edit applies", async () => {
    const { env, trajectory, a, b } = hostSide();
    for (let i = 0; i < MAX_STAGED_EVENTS - 10; i++) await a("stage_edit", [`X = ${i}.0`]);
    for (let i = 0; i < 500; i++) expect(await b("stage_edit", [`X = ${i + 1000}.0`])).toMatch(/^edit staged/);
    expect(env.program).toContain("X = 1499.0");
    const staged = ofType(trajectory, "staged_edit");
    expect(staged).toHaveLength(MAX_STAGED_EVENTS + 1);
    expect(staged.at(-1)).toMatchObject({
      tool: "b",
      note: `more than ${MAX_STAGED_EVENTS} staged edits in this rollout: later ones are not recorded one by one`,
    });
    expect(staged.slice(0, -1).every((e) => e.note === undefined)).toBe(true);
  });

  it("records the first MAX_TOOL_LOG_EVENTS log lines of a rollout, then one note", async () => {
    const { trajectory, a, b } = hostSide();
    for (let i = 0; i < 150; i++) expect(await a("log", [`line ${i}`])).toBeNull();
    for (let i = 0; i < 150; i++) await b("log", [`line ${i}`]);
    const logs = ofType(trajectory, "tool_log");
    expect(logs).toHaveLength(MAX_TOOL_LOG_EVENTS + 1);
    expect(logs[0]).toEqual({ type: "tool_log", tool: "a", message: "line 0" });
    expect(logs.at(-1)).toMatchObject({ tool: "b", note: expect.stringContaining("not recorded one by one") });
  });

  it("a few staged edits and log lines are each recorded as before", async () => {
    const { trajectory, a } = hostSide();
    await a("stage_edit", ["X = 2.0"]);
    await a("log", ["hello"]);
    expect(trajectory.events).toEqual([
      { type: "staged_edit", tool: "a", lines: 6 },
      { type: "tool_log", tool: "a", message: "hello" },
    ]);
  });
});

const FIXTURE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");

const CHATTY = `def run(ctx, args):
    for i in range(400):
        ctx.stage_edit("X = %d.0" % i)
        ctx.log("step %d" % i)
    return "staged"
`;

describe("a real Python tool staging and logging 400 times in one call", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap", sealedMissing()));
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  beforeAll(async () => {
    task = loadTaskFolder(makeTask("def evaluate(program_path):\n    return {'combined_score': 1.0}\n"));
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => pool?.close());

  it("records at most the caps and one note of each kind, in a rollout of two calls", async () => {
    const dir = copyOf(FIXTURE);
    write(join(dir, "custom_tools", "chatty.py"), CHATTY);
    write(
      join(dir, "tools", "chatty.tool.yaml"),
      "type: tool\nname: chatty\ndescription: t\ninput_schema: {type: object, properties: {}}\n",
    );
    edit(join(dir, "agent.yaml"), (t) =>
      t.replace(
        "stop_tools:",
        "  - name: chatty\n    yaml_path: ./tools/chatty.tool.yaml\n    binding: inner.harness.tools.custom_runtime:custom_tool\n    extra_kwargs: {_sah_py_path: ./custom_tools/chatty.py}\n\nstop_tools:",
      ),
    );
    const harness = await prepareHarness(dir, { task });
    const trajectory = new MemoryTrajectory();
    const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: JSON.stringify(args) });
    const channel = pool.toolChannel();
    await runRollout({
      harness,
      task,
      model: scriptedModel([[call("chatty")], [call("chatty")], [call("finish", { summary: "done" })]]),
      evaluate: (p) => pool.evaluate(p),
      maxEvals: 2,
      seed: 0,
      trajectory,
      generatedCode: (env, t) =>
        generatedCodeHost(harness.tools, env, taskInputs(task), t, { seed: 0, python: { task, channel } }),
    });
    const results = ofType(trajectory, "tool_result") as unknown as { output: string }[];
    expect(results.slice(0, 2).map((r) => r.output)).toEqual(["staged", "staged"]);
    expect(ofType(trajectory, "staged_edit")).toHaveLength(MAX_STAGED_EVENTS + 1);
    expect(ofType(trajectory, "tool_log")).toHaveLength(MAX_TOOL_LOG_EVENTS + 1);
  });
});
