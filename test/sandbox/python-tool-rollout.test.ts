import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Harness } from "../../src/harness/types.ts";
import { runRollout } from "../../src/runtime/rollout.ts";
import { checkHarness, prepareHarness } from "../../src/sandbox/check.ts";
import { generatedCodeHost } from "../../src/sandbox/generated-code.ts";
import { taskInputs } from "../../src/sandbox/tool-host.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { coldToolChannel, type ToolChannelSource } from "../../src/task/tool-channel.ts";
import { copyOf, edit, makeTask, ROOT, write } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

// Python tools of a HarnessTTT-style package (test/fixtures/nexau/harnessttt-initial) in real rollouts: the tool's
// process runs contained (warm in the pool's program zygote, or cold), its ctx is answered from the rollout, and no
// tool can spend more than the budget, however often it calls ctx.evaluate().

const FIXTURE = join(ROOT, "test", "fixtures", "nexau", "harnessttt-initial");

/** The fixture with one more Python tool, bound the way HarnessTTT binds one. */
function withPythonTool(name: string, code: string, schema = "{type: object, properties: {}}"): string {
  const dir = copyOf(FIXTURE);
  write(join(dir, "custom_tools", `${name}.py`), code);
  write(
    join(dir, "tools", `${name}.tool.yaml`),
    `type: tool\nname: ${name}\ndescription: a test tool\ninput_schema: ${schema}\n`,
  );
  edit(join(dir, "agent.yaml"), (t) =>
    t.replace(
      "stop_tools:",
      `  - name: ${name}\n    yaml_path: ./tools/${name}.tool.yaml\n    binding: inner.harness.tools.custom_runtime:custom_tool\n    extra_kwargs: {_sah_py_path: ./custom_tools/${name}.py}\n\nstop_tools:`,
    ),
  );
  return dir;
}

const SPEND_ALL = `def run(ctx, args):
    out = [ctx.evaluate() for _ in range(30)]
    scored = [r for r in out if r.get("combined_score") is not None]
    refused = [r for r in out if r.get("error") == "evaluation budget exhausted"]
    return {"scored": len(scored), "refused": len(refused), "left": ctx.budget_left()}
`;

describe("Python tools in rollouts", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap", sealedMissing()));
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  beforeAll(async () => {
    task = loadTaskFolder(
      makeTask(
        "import importlib.util\n\ndef evaluate(program_path):\n    spec = importlib.util.spec_from_file_location('candidate', program_path)\n    m = importlib.util.module_from_spec(spec)\n    spec.loader.exec_module(m)\n    return {'combined_score': float(m.run())}\n",
      ),
    );
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => pool?.close());

  const rollout = async (
    harness: Harness,
    steps: { name: string; arguments: string }[][],
    channel: ToolChannelSource,
    maxEvals = 6,
  ) => {
    const trajectory = new MemoryTrajectory();
    const outcome = await runRollout({
      harness,
      task,
      model: scriptedModel(steps),
      evaluate: (p) => pool.evaluate(p),
      maxEvals,
      seed: 0,
      trajectory,
      generatedCode: (env, t) =>
        generatedCodeHost(harness.tools, env, taskInputs(task), t, { seed: 0, python: { task, channel } }),
    });
    const results = trajectory.events.filter((e) => e.type === "tool_result") as unknown as { name: string; output: string }[];
    return { outcome, trajectory, results };
  };
  const call = (name: string, args: Record<string, unknown> = {}) => ({ name, arguments: JSON.stringify(args) });

  it.each([
    ["warm", () => pool.toolChannel()],
    ["cold", () => coldToolChannel(task)],
  ])("a tool calling ctx.evaluate() 30 times with a budget of 6 spends 6 (%s)", async (_how, channel) => {
    const harness = await prepareHarness(withPythonTool("spend_all", SPEND_ALL), { task });
    const { outcome, results } = await rollout(harness, [[call("spend_all")], [call("finish", { summary: "done" })]], channel());
    expect(outcome.evaluations.used).toBe(6);
    expect(JSON.parse(results[0]?.output ?? "")).toEqual({ scored: 6, refused: 24, left: { evaluations: 0, probes: 12 } });
  });

  it("runs the package's own tool: stages the block, evaluates it, logs, and the best program is kept", async () => {
    const harness = await prepareHarness(FIXTURE, { task });
    const { outcome, trajectory, results } = await rollout(
      harness,
      [
        [call("evaluate_block", { block: "X = 2.5" })],
        [call("evaluate_block", {})],
        [call("probe_solution")],
        [call("edit_program", { code: "<<<<<<< SEARCH\nX = 2.5\n=======\nX = 3.5\n>>>>>>> REPLACE" })],
        [call("evaluate_program")],
        [call("finish", { summary: "done" })],
      ],
      pool.toolChannel(),
    );
    const first = JSON.parse(results[0]?.output ?? "");
    expect(first).toMatchObject({ combined_score: 2.5, validity: 1, error: null, valid: true, beat_previous_best: true });
    expect(JSON.parse(results[1]?.output ?? "")).toEqual({
      error: "pass block: the complete new body of the EVOLVE block",
      evaluations_left: 5,
    });
    expect(results[2]?.output).toMatch(/^PROBE: the current program runs and is valid/);
    expect(results[3]?.output).toMatch(/^Edit applied/);
    expect([outcome.bestScore, outcome.evaluations.used]).toEqual([3.5, 2]);
    expect(trajectory.events.filter((e) => e.type === "tool_log").length).toBeGreaterThan(0);
  });

  it("a tool that breaks becomes a tool error the executor sees; the rollout goes on", async () => {
    const harness = await prepareHarness(
      withPythonTool(
        "flaky",
        "def run(ctx, args):\n    if args.get('boom'):\n        raise ValueError('tool bug')\n    return 'fine'\n",
        "{type: object, properties: {boom: {type: boolean, default: false}}}",
      ),
      { task },
    );
    const { outcome, trajectory, results } = await rollout(
      harness,
      [[call("flaky", { boom: true })], [call("evaluate_program")], [call("finish", { summary: "x" })]],
      pool.toolChannel(),
    );
    expect(results[0]?.output).toMatch(/^Error: the tool flaky failed \(error\): ValueError: tool bug/);
    expect(trajectory.events.find((e) => e.type === "sandbox_failure")).toMatchObject({ tool: "flaky", kind: "error" });
    expect(outcome.evaluations.used).toBe(1);
  });
});

describe("hone harness check on Python tools", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap", sealedMissing()));
  it("accepts HarnessTTT's package with its Python tool", async () => {
    const r = await checkHarness(FIXTURE);
    expect(r.problems).toEqual([]);
  });

  it("refuses what the gate refuses, with line:column, and what fails HarnessTTT's self-test, with the arguments", async () => {
    let dir = withPythonTool("reader", "import os\n\ndef run(ctx, args):\n    return open('/etc/passwd').read()\n");
    const gated = await checkHarness(dir);
    expect(gated.problems.map((p) => [p.check, p.message])).toEqual([
      ["gate", expect.stringMatching(/custom_tools\/reader.py:1:1: \[import\] forbidden import: os/)],
      ["gate", expect.stringMatching(/custom_tools\/reader.py:4:12: .*forbidden builtin: open/)],
    ]);
    dir = withPythonTool(
      "strict",
      "def run(ctx, args):\n    return {'mode': args['mode'], 'n': args['n'] * 2}\n",
      "{type: object, properties: {mode: {type: string, enum: [fast, slow]}, n: {type: integer, minimum: 3}}}",
    );
    const tested = await checkHarness(dir);
    expect(tested.problems).toEqual([
      expect.objectContaining({
        check: "self-test",
        message: expect.stringMatching(/run\(ctx, \{\}\) failed \(error\): KeyError: 'mode'/),
      }),
    ]);
  });
});
