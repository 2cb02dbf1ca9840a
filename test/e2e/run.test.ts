import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone, unexpectedStderr } from "../helpers/cli.ts";
import { copyOf, edit, GENERATED_HARNESS, INITIAL_HARNESS, makeTask, tempDir, write } from "../helpers/fixtures.ts";

const SECRET = "sk-e2e-secret-value-0123456789";

function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? allFiles(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe("hone run (CLI, offline model)", () => {
  it("beats the seed program within 20 evaluations and writes a complete run directory", async () => {
    const out = join(tempDir(), "cp");
    const r = await hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "20", "--out", out, "--json"], {
      env: { OPENAI_API_KEY: SECRET },
    });
    // Nothing on stderr but, where bubblewrap is missing, the one note saying what is not isolated.
    expect(unexpectedStderr(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout);
    const result = JSON.parse(readFileSync(join(out, "result.json"), "utf8"));
    expect(result.status).toBe("completed");
    expect(result.start_score).toBeCloseTo(0.9597642, 6);
    expect(result.best_score).toBeGreaterThan(result.start_score);
    expect(result.evaluations.used).toBeLessThanOrEqual(20);
    expect(printed.best_score).toBe(result.best_score);
    expect(result.usage.model_calls).toBeGreaterThan(0);
    expect(result.usage.total_tokens).toBeGreaterThan(0);

    const events = readFileSync(join(out, "trajectory.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[0].type).toBe("rollout_start");
    expect(events.at(-1).type).toBe("rollout_end");
    const modelCalls = events.filter((e) => e.type === "model_call");
    expect(modelCalls.every((e) => e.usage.total_tokens > 0 && e.latency_ms > 0)).toBe(true);
    const evaluations = events.filter((e) => e.type === "evaluation");
    const bestEval = evaluations.filter((e) => e.valid).reduce((a, b) => (b.score > a.score ? b : a));
    expect(bestEval.score).toBe(result.best_score);
    expect(readFileSync(join(out, "best_program.py"), "utf8")).toBe(readFileSync(join(out, bestEval.program_file), "utf8"));

    for (const f of allFiles(out)) expect(readFileSync(f, "utf8"), f).not.toContain(SECRET);
  });

  it("refuses a bad harness package with exit 3, the file and field, and writes nothing", async () => {
    const bad = copyOf(INITIAL_HARNESS);
    edit(join(bad, "agent.yaml"), (t) => t.replace("max_iterations: 80", "max_iterations: -2"));
    const out = join(tempDir(), "never");
    const r = await hone(["run", "--harness", bad, "--task", "circle-packing", "--model", "offline", "--out", out]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/agent.yaml \(max_iterations\)/);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a bad task folder with exit 4 and writes nothing", async () => {
    const task = makeTask("def evaluate(program_path):\n    return {}\n", { seed: "# EVOLVE-BLOCK-START\nX = 1\n" });
    const out = join(tempDir(), "never");
    const r = await hone(["run", "--task", task, "--model", "offline", "--out", out]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/initial_program.py \(EVOLVE-BLOCK\): EVOLVE-BLOCK-START has no EVOLVE-BLOCK-END after it/);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses an unknown task id with exit 4 and the list of built-ins", async () => {
    const r = await hone(["run", "--task", "no-such-task", "--model", "offline"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/no built-in task "no-such-task".*circle-packing/);
  });

  it("says when the evaluator itself is broken (exit 8)", async () => {
    const task = makeTask("def evaluate(program_path):\n    raise RuntimeError('evaluator bug')\n");
    const out = join(tempDir(), "never");
    const r = await hone(["run", "--task", task, "--model", "offline", "--out", out]);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/evaluator failed on the seed program.*RuntimeError: evaluator bug/);
    expect(existsSync(out)).toBe(false);
  });

  it.each([
    ["NaN", "return {'combined_score': float('nan')}"],
    ["inf", "return {'combined_score': float('inf')}"],
    ["nothing", "return None"],
    ["no score", "return {'note': 'no number to average'}"],
  ])("says the evaluator is broken when it returns %s on the seed program (exit 8)", async (_, body) => {
    const task = makeTask(`def evaluate(program_path):\n    ${body}\n`);
    const out = join(tempDir(), "never");
    const r = await hone(["run", "--task", task, "--model", "offline", "--out", out]);
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/the evaluator failed on the seed program .*initial_program.py: .*Fix .*evaluator.py/);
    expect(existsSync(out)).toBe(false);
  });

  it("fails fast on an unreachable endpoint with exit 6 and writes nothing", async () => {
    const out = join(tempDir(), "never");
    const r = await hone(
      ["run", "--task", "circle-packing", "--base-url", "http://127.0.0.1:9/v1", "--model", "x", "--out", out],
      { env: { OPENAI_API_KEY: SECRET } },
    );
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/cannot reach http:\/\/127.0.0.1:9\/v1/);
    expect(r.stderr).not.toContain(SECRET);
    expect(existsSync(out)).toBe(false);
  });

  it("exits 2 on a usage error", async () => {
    const r = await hone(["run", "--model", "offline"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--task/);
  });
});

describe("hone tasks and hone models check", () => {
  it("lists the built-in tasks", async () => {
    const r = await hone(["tasks", "--json"]);
    expect(r.code).toBe(0);
    const tasks = JSON.parse(r.stdout);
    expect(tasks.find((t: { id: string }) => t.id === "circle-packing")).toMatchObject({
      direction: "maximize",
      best_known: 2.635983,
    });
  });

  it("checks the offline model end to end", async () => {
    const r = await hone(["models", "check", "--model", "offline"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ok\s+tool call: called ping/);
  });

  it("reports an unreachable endpoint with exit 6", async () => {
    const r = await hone(["models", "check", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]);
    expect(r.code).toBe(6);
    expect(r.stdout).toMatch(/FAIL\s+list models: cannot reach/);
  });
});

describe("hone harness check and generated code on the offline model", () => {
  it("accepts the example package and runs it, using its generated tool and middleware", async () => {
    const check = await hone(["harness", "check", "harnesses/examples/generated-code", "--task", "circle-packing"]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/2 generated/);
    expect(check.stdout).toMatch(/accepted/);
    const out = join(tempDir(), "gen");
    const r = await hone([
      "run",
      "--harness",
      "harnesses/examples/generated-code",
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "10",
      "--out",
      out,
      "--json",
    ]);
    expect(r.code).toBe(0);
    const events = readFileSync(join(out, "trajectory.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === "tool_result" && e.name === "evaluate_block" && !e.error).length).toBeGreaterThan(0);
    expect(events.some((e) => e.type === "middleware" && e.middleware === "halfway_note")).toBe(true);
    expect(JSON.parse(r.stdout).best_score).toBeGreaterThan(JSON.parse(r.stdout).start_score);
  });

  it("refuses a package whose generated code the gate rejects, with exit 3 and the rule", async () => {
    const dir = copyOf("harnesses/examples/generated-code");
    edit(join(dir, "custom_tools/evaluate_block.js"), () => "function run(ctx) { return process.env; }\n");
    const r = await hone(["harness", "check", dir, "--json"]);
    expect(r.code).toBe(3);
    const report = JSON.parse(r.stdout);
    expect(report.problems[0].message).toMatch(/evaluate_block.js:1:28: \[unknown-global\]/);
  });

  it("lists every problem of a package that does not load, each with its file and field or line:column", async () => {
    const dir = copyOf(GENERATED_HARNESS);
    edit(join(dir, "agent.yaml"), (t) => t.replace("max_restarts: 2", "max_restarts: -1"));
    edit(join(dir, "tools/finish.tool.yaml"), (t) => t.replace("type: object", "type: string"));
    write(join(dir, "custom_tools/evaluate_block.js"), "function run(ctx) { return process.env; }\n");
    const r = await hone(["harness", "check", dir]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/refused \[load\] tools\/finish.tool.yaml \(input_schema.type\): /);
    expect(r.stdout).toMatch(/refused \[load\] agent.yaml \(middlewares.1.params.max_restarts\): /);
    expect(r.stdout).toMatch(/refused \[gate\] custom_tools\/evaluate_block.js:1:28: \[unknown-global\]/);
    expect(r.stdout).toMatch(/refused \(3 problems\)/);
  });

  it("names the file of a self-test failure", async () => {
    const dir = copyOf(GENERATED_HARNESS);
    write(join(dir, "custom_tools/evaluate_block.js"), 'function run(ctx, args) { throw new Error("boom"); }\n');
    const r = await hone(["harness", "check", dir]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(
      /refused \[self-test\] custom_tools\/evaluate_block.js: self-test: run\(ctx, .*\) failed \(throw\): boom/,
    );
  });

  it("refuses a prompt.md that links out of the package: nothing outside is read or sent to a model", async () => {
    const dir = copyOf(INITIAL_HARNESS);
    const secret = join(tempDir(), "secret.md");
    writeFileSync(secret, "a host file the package must not carry\n");
    rmSync(join(dir, "prompt.md"));
    symlinkSync(secret, join(dir, "prompt.md"));
    const out = join(tempDir(), "never");
    const r = await hone(["run", "--harness", dir, "--task", "circle-packing", "--model", "offline", "--out", out]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/prompt.md: is a symbolic link to .*secret.md, outside the package/);
    expect(existsSync(out)).toBe(false);
    const check = await hone(["harness", "check", dir]);
    expect(check.code).toBe(3);
    expect(check.stdout).toMatch(/refused \[load\] prompt.md: is a symbolic link/);
  });

  it("refuses a Latin-1 agent.yaml with the file and the byte offset", async () => {
    const dir = copyOf(INITIAL_HARNESS);
    const text = readFileSync(join(dir, "agent.yaml"), "latin1").replace("initial-discovery", "initial-discovery # caf\u00e9");
    writeFileSync(join(dir, "agent.yaml"), Buffer.from(text, "latin1"));
    const offset = text.indexOf("\u00e9");
    const r = await hone([
      "run",
      "--harness",
      dir,
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--out",
      join(tempDir(), "x"),
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(
      `agent.yaml: is not UTF-8 text: byte 0xe9 at byte offset ${offset} does not start a valid UTF-8 sequence`,
    );
  });
});
