import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadHarness } from "../../src/harness/package.ts";
import { runRollout } from "../../src/runtime/rollout.ts";
import { checkHarness, gateGeneratedCode, prepareHarness } from "../../src/sandbox/check.ts";
import { generatedCodeHost } from "../../src/sandbox/generated-code.ts";
import { sampleFromSchema } from "../../src/sandbox/self-test.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { CIRCLE_PACKING, copyOf, edit, GENERATED_HARNESS, INITIAL_HARNESS, write } from "../helpers/fixtures.ts";
import { scriptedModel } from "../helpers/scripted-model.ts";

const task = loadTaskFolder(CIRCLE_PACKING);
const withTool = (
  source: string,
  schema = "  type: object\n  properties:\n    n:\n      type: integer\n      minimum: 2\n  required: [n]\n",
) => {
  const dir = copyOf(GENERATED_HARNESS);
  write(join(dir, "custom_tools/evaluate_block.js"), source);
  write(join(dir, "tools/evaluate_block.tool.yaml"), `name: evaluate_block\ndescription: test tool\ninput_schema:\n${schema}`);
  return dir;
};

describe("hone harness check", () => {
  it("accepts the example package with a generated tool and a generated middleware", async () => {
    const r = await checkHarness(GENERATED_HARNESS, { task });
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.harness?.tools.find((t) => t.name === "evaluate_block")?.kind).toBe("custom");
  });

  it("refuses generated code the gate rejects, naming rule and line:column", async () => {
    const r = await checkHarness(withTool("function run(ctx, args) {\n  return require('fs');\n}\n"));
    expect(r.ok).toBe(false);
    expect(r.problems[0]).toMatchObject({ check: "gate" });
    expect(r.problems[0]?.message).toMatch(/custom_tools\/evaluate_block.js:2:10: \[unknown-global\].*require/);
  });

  it("runs the gate again at load time", () => {
    const dir = withTool("function run(ctx) { return eval('1'); }");
    expect(() => loadHarness(dir, { generatedCode: gateGeneratedCode })).toThrow(/\[no-eval\]/);
  });

  it.each([
    ["a throw", "function run(ctx, args) { throw new Error('broken tool'); }", /failed \(throw\): broken tool/],
    ["a timeout", "function run(ctx, args) { while (true) {} }", /failed \(timeout\)/],
    ["out of memory", "function run(ctx, args) { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }", /failed \(memory\)/],
    ["a wrong shape", "function run(ctx, args) { return () => 1; }", /returned a function/],
    ["no result", "function run(ctx, args) { return ''; }", /returned nothing/],
  ])("self-test refuses %s", async (_name, source, message) => {
    const r = await checkHarness(withTool(source));
    expect(r.ok).toBe(false);
    expect(r.problems.find((p) => p.check === "self-test")?.message).toMatch(message);
  });

  it("self-test calls the tool with arguments from its schema", async () => {
    expect(
      sampleFromSchema({
        type: "object",
        properties: { n: { type: "integer", minimum: 2 }, s: { type: "string" }, e: { enum: ["a", "b"] } },
        required: ["n", "s", "e"],
      }),
    ).toEqual({ n: 2, s: "sample", e: "a" });
    const r = await checkHarness(
      withTool("function run(ctx, args) { if (args.n !== 2) throw new Error('got ' + JSON.stringify(args)); return 'ok'; }"),
    );
    expect(r.problems).toEqual([]);
  });

  it("self-test refuses a middleware returning the wrong shape", async () => {
    const dir = copyOf(GENERATED_HARNESS);
    write(join(dir, "middlewares/halfway_note.js"), "function beforeModel(view) { return { append: 'not a list' }; }");
    const r = await checkHarness(dir);
    expect(r.problems.find((p) => p.check === "self-test")?.message).toMatch(
      /beforeModel failed: beforeModel returned the wrong shape at append/,
    );
  });

  it("refuses an invalid JSON Schema and a generated tool shadowing a fixed tool", async () => {
    const bad = await checkHarness(
      withTool("function run(ctx, args) { return 'ok'; }", "  type: object\n  properties:\n    n:\n      type: 12\n"),
    );
    expect(bad.problems.find((p) => p.check === "schema")?.message).toMatch(/not a valid JSON Schema/);
    const dir = copyOf(INITIAL_HARNESS);
    write(join(dir, "custom_tools/view_program.js"), "function run(ctx) { return ctx.program; }");
    const clash = await checkHarness(dir);
    expect(clash.problems.find((p) => p.check === "schema")?.message).toMatch(/clashes with hone's fixed tool/);
  });

  it("leak guard refuses a package carrying the evaluator's source", async () => {
    const dir = copyOf(INITIAL_HARNESS);
    const evaluator = readFileSync(task.evaluatorPath, "utf8");
    const line = evaluator.split("\n").find((l) => l.includes("def evaluate(program_path, n=N"));
    edit(join(dir, "prompt.md"), (t) => `${t}\nThe checker starts with: ${line}\n`);
    const r = await checkHarness(dir, { task });
    expect(r.problems.find((p) => p.check === "leak")?.message).toMatch(/contains a line of the evaluator's source/);
  });

  it("leak guard refuses a task's marked secret", async () => {
    const dir = copyOf(INITIAL_HARNESS);
    edit(join(dir, "skills/discovery/SKILL.md"), (t) => `${t}\nhidden answer: 2.63598325-SECRET\n`);
    const r = await checkHarness(dir, { task: { ...task, secrets: [task.secrets[0] ?? "", "2.63598325-SECRET"] } });
    expect(r.problems.find((p) => p.check === "leak")?.message).toMatch(/the task's secret #1/);
  });

  it("prepareHarness refuses with every reason in one message", async () => {
    await expect(prepareHarness(withTool("function run(ctx) { return eval('x') + require('y'); }"))).rejects.toThrow(
      /\[no-eval\][\s\S]*\[unknown-global\]/,
    );
  });
});

describe("generated code failing mid-rollout", () => {
  const evaluate = async (): Promise<Evaluation> => ({ valid: true, score: 1, metrics: {}, artifacts: {}, seconds: 0 });
  const rollout = async (toolSource: string, cpuMs: number) => {
    const harness = loadHarness(withTool(toolSource, "  type: object\n  properties: {}\n"), { generatedCode: gateGeneratedCode });
    const trajectory = new MemoryTrajectory();
    const call = (name: string) => ({ name, arguments: "{}" });
    const model = scriptedModel([[call("evaluate_block")], [call("evaluate_block")], [call("view_program")], [call("finish")]]);
    const outcome = await runRollout({
      harness,
      task,
      model,
      evaluate,
      maxEvals: 5,
      seed: 0,
      trajectory,
      generatedCode: (env, t) =>
        generatedCodeHost(
          harness.tools,
          env,
          { id: "cp", description: "d", metric: "combined_score", direction: "maximize", reference: null },
          t,
          { seed: 0, limits: { memoryMb: 32, cpuMs, wallMs: 4 * cpuMs, maxResultChars: 10_000 } },
        ),
    });
    return { outcome, trajectory };
  };

  // Filling 32 MB can take more than 200 ms of CPU on a loaded machine (GC near the limit), hence its own limit.
  it.each([
    ["throws", "function run(ctx) { throw new Error('tool bug'); }", "throw", 200],
    ["hangs", "function run(ctx) { while (true) {} }", "timeout", 200],
    ["runs out of memory", "function run(ctx) { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }", "memory", 5000],
  ])(
    "a tool that %s becomes a tool error; the rollout goes on and the trajectory records it",
    async (_name, source, kind, cpuMs) => {
      const { outcome, trajectory } = await rollout(source, cpuMs);
      expect(outcome.stopReason).toBe("finish");
      const results = trajectory.events.filter((e) => e.type === "tool_result" && e.name === "evaluate_block");
      expect(results).toHaveLength(2);
      expect(results.every((e) => e.error === true && String(e.output).includes(`(${kind})`))).toBe(true);
      expect(trajectory.events.filter((e) => e.type === "sandbox_failure" && e.kind === kind)).toHaveLength(2);
      expect(trajectory.events.some((e) => e.type === "tool_result" && e.name === "view_program" && e.error === false)).toBe(
        true,
      );
    },
  );
});
