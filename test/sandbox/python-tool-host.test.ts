import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { MAX_SAMPLE_LINES, NOT_ALLOWED } from "../../src/sandbox/python-task-inputs.ts";
import { newPythonState, pythonCtx, pythonToolOutput } from "../../src/sandbox/python-tool-host.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// The ctx a generated Python tool gets in a rollout, answered on the host under HarnessTTT's names. These tests call
// the host side directly (what the tool's process would ask for); python-tool-rollout.test.ts runs real tools.

const PROGRAM = "import math\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\nprint(X)\n";

function setup(o: { maxEvals?: number; maxProbes?: number; taskDir?: string; secrets?: string[] } = {}) {
  let calls = 0;
  let release: () => void = () => {};
  let hold: Promise<void> | undefined;
  const evaluate = async (program: string): Promise<Evaluation> => {
    calls++;
    if (hold) await hold;
    const x = Number(/X = ([0-9.]+)/.exec(program)?.[1]);
    return { valid: true, score: x, metrics: { combined_score: x }, artifacts: {}, seconds: 0 };
  };
  const env = new DiscoveryEnvironment({
    task: { metric: "combined_score", direction: "maximize" },
    startProgram: PROGRAM,
    maxEvals: o.maxEvals ?? 3,
    evaluate,
  });
  const trajectory = new MemoryTrajectory();
  const ctx = pythonCtx({
    env,
    task: { dir: o.taskDir ?? tempDir(), secrets: o.secrets ?? [] },
    trajectory,
    tool: "probe_tool",
    maxProbes: o.maxProbes ?? 2,
    state: newPythonState(),
  });
  return {
    env,
    trajectory,
    ctx,
    calls: () => calls,
    holdEvaluations: () => {
      hold = new Promise((r) => {
        release = r;
      });
      return () => release();
    },
  };
}

describe("ctx of a Python tool in a rollout", () => {
  it("reads the current and best program and the best score (none yet: null, -inf on the tool's side)", async () => {
    const { ctx } = setup();
    expect(await ctx("get_program", [])).toBe(PROGRAM);
    expect(await ctx("get_best_program", [])).toBe(PROGRAM);
    expect(await ctx("best_score", [])).toBeNull();
  });

  it("stages SEARCH/REPLACE or whole-block edits under the EVOLVE-block rules, and refuses the rest in words", async () => {
    const { ctx, env, trajectory } = setup();
    expect(await ctx("stage_edit", ["<<<<<<< SEARCH\nX = 1.0\n=======\nX = 2.0\n>>>>>>> REPLACE"])).toMatch(/^edit staged/);
    expect(env.program).toContain("X = 2.0");
    expect(await ctx("stage_edit", ["X = 4.0"])).toMatch(/^edit staged/);
    expect(env.program).toBe(PROGRAM.replace("X = 1.0", "X = 4.0"));
    expect(await ctx("stage_edit", ["<<<<<<< SEARCH\nprint(X)\n=======\nprint(1)\n>>>>>>> REPLACE"])).toMatch(/^ERROR: .*EVOLVE/);
    await expect(ctx("stage_edit", [{ code: 1 }])).rejects.toThrow(/must be a string/);
    expect(trajectory.events.filter((e) => e.type === "staged_edit")).toHaveLength(2);
  });

  it("evaluates within the budget: HarnessTTT's fields, then hone's summary; then 'evaluation budget exhausted'", async () => {
    const { ctx, env, calls } = setup({ maxEvals: 2 });
    await ctx("stage_edit", ["X = 3.0"]);
    expect(await ctx("evaluate", [])).toMatchObject({
      combined_score: 3,
      validity: 1,
      error: null,
      valid: true,
      evaluations_left: 1,
    });
    expect(await ctx("best_score", [])).toBe(3);
    await ctx("evaluate", []);
    expect(await ctx("evaluate", [])).toEqual({ error: "evaluation budget exhausted" });
    expect([env.used, calls()]).toEqual([2, 2]);
  });

  it("counts evaluations before they start: concurrent calls cannot pass the budget", async () => {
    const { ctx, env, calls, holdEvaluations } = setup({ maxEvals: 2 });
    const release = holdEvaluations();
    const pending = Array.from({ length: 6 }, () => ctx("evaluate", []));
    expect(await ctx("budget_left", [])).toEqual({ evaluations: 0, probes: 2 });
    release();
    const results = await Promise.all(pending);
    expect(results.filter((r) => (r as { error?: string }).error === "evaluation budget exhausted")).toHaveLength(4);
    expect([env.used, calls()]).toEqual([2, 2]);
  });

  it("probes outside the budget, validity only (a score would be a free evaluation), at most maxProbes", async () => {
    const { ctx, env, calls } = setup({ maxProbes: 2 });
    expect(await ctx("probe", [2000])).toEqual({ combined_score: null, validity: 1, error: null });
    await ctx("probe", []);
    expect(await ctx("probe", [])).toEqual({ error: "probe budget exhausted" });
    expect(await ctx("budget_left", [])).toEqual({ evaluations: 3, probes: 0 });
    expect([env.used, calls()]).toEqual([0, 2]);
  });

  it("keeps scratch files in memory for the rollout: base names only, capped", async () => {
    const { ctx } = setup();
    expect(await ctx("scratch_write", ["../../etc/notes.txt", "hello"])).toBe("scratch/notes.txt");
    expect(await ctx("scratch_read", ["notes.txt"])).toBe("hello");
    expect(await ctx("scratch_read", ["/tmp/other/notes.txt"])).toBe("hello");
    expect(await ctx("scratch_read", ["missing"])).toBe("ERROR: no such file");
    expect(await ctx("scratch_write", ["..", "x"])).toBe("ERROR: not a file name");
    expect(await ctx("scratch_write", ["big", "x".repeat(8 * 1024 * 1024 + 1)])).toBe("ERROR: too large");
    for (let i = 0; i < 63; i++) await ctx("scratch_write", [`f${i}`, "x"]);
    expect(await ctx("scratch_write", ["one-too-many", "x"])).toBe("ERROR: the scratch space is full");
  });

  it("logs to the trajectory, cut to 400 characters", async () => {
    const { ctx, trajectory } = setup();
    expect(await ctx("log", ["y".repeat(1000)])).toBeNull();
    expect(trajectory.events.find((e) => e.type === "tool_log")).toMatchObject({ tool: "probe_tool", message: "y".repeat(400) });
  });

  it("answers nothing but its own methods", async () => {
    const { ctx } = setup();
    for (const m of ["read_file", "constructor", "__proto__", "toString", "hasOwnProperty"])
      await expect(ctx(m, [])).rejects.toThrow(/no method/);
  });

  it("results reach the executor as HarnessTTT's dispatcher gives them: text, or JSON, cut to 8,000 characters", () => {
    expect(pythonToolOutput("z".repeat(9000))).toHaveLength(8000);
    expect(pythonToolOutput({ a: [1, 2] })).toBe('{"a":[1,2]}');
    expect(pythonToolOutput(null)).toBe("null");
  });
});

describe("task inputs a Python tool may read", () => {
  const dir = tempDir("hone-inputs-");
  write(join(dir, "data.csv"), `${Array.from({ length: 6000 }, (_, i) => `${i},${i * 2}`).join("\n")}\n`);
  write(join(dir, "notes.txt"), "plain notes\n");
  write(join(dir, "sub", "params.json"), '{"k": 1}\n');
  for (const hidden of ["answers.csv", "ground_truth.json", "expected_output.txt", "solution.txt", "evaluator_data.json"])
    write(join(dir, hidden), "hidden\n");
  write(join(dir, "evaluator", "cases.csv"), "hidden\n");
  write(join(dir, ".private.csv"), "hidden\n");
  write(join(dir, "evaluator.py"), "def evaluate(p): return {}\n");
  write(join(dir, "secret.txt"), "the hidden key is 7d1f-hidden-secret-value\n");
  symlinkSync("/etc/passwd", join(dir, "passwd.txt"));
  mkdirSync(join(dir, "zz"));
  for (let i = 0; i < 60; i++) write(join(dir, "zz", `x${String(i).padStart(2, "0")}.txt`), `${i}\n`);

  it("lists .csv, .txt and .json files, none named for evaluators, answers or solutions, none hidden or linked, at most 50", async () => {
    const { ctx } = setup({ taskDir: dir });
    const listed = (await ctx("list_task_inputs", [])) as string[];
    expect(listed).toHaveLength(50);
    expect(listed.slice(0, 5)).toEqual(["data.csv", "notes.txt", "secret.txt", "sub/params.json", "zz/x00.txt"]);
    for (const f of listed) expect(f).not.toMatch(/answer|ground_truth|expected|solution|evaluator|^\.|passwd/);
  });

  it("reads the first lines of a listed file, at most 5,000, and nothing else", async () => {
    const { ctx } = setup({ taskDir: dir, secrets: ["7d1f-hidden-secret-value"] });
    expect(await ctx("read_input_sample", ["data.csv", 3])).toBe("0,0\n1,2\n2,4\n");
    expect(((await ctx("read_input_sample", ["data.csv", 100000])) as string).split("\n")).toHaveLength(MAX_SAMPLE_LINES + 1);
    expect(await ctx("read_input_sample", ["sub/params.json"])).toBe('{"k": 1}\n');
    expect(await ctx("read_input_sample", ["secret.txt"])).toBe(NOT_ALLOWED);
    for (const name of ["answers.csv", "../../etc/passwd", "/etc/passwd", "passwd.txt", "evaluator.py", "sub/../answers.csv", 7])
      expect(await ctx("read_input_sample", [name])).toBe(NOT_ALLOWED);
  });
});
