import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { loadEntry, readRegistry } from "../../src/task/registry.ts";
import { makeTask, tempDir, write } from "../helpers/fixtures.ts";

/** An evaluator's helper: what the program's run() returns, the program imported as OpenEvolve's examples import it. */
const VALUE_OF = `import importlib.util

def _value(program_path):
    spec = importlib.util.spec_from_file_location("p", program_path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m.run()
`;

// An evaluator written as OpenEvolve's examples are: EvaluationResult with artifacts, cascade stages.
const OPENEVOLVE_EVALUATOR = `
from openevolve.evaluation_result import EvaluationResult
${VALUE_OF}
def evaluate_stage1(program_path):
    v = _value(program_path)
    return EvaluationResult(metrics={"combined_score": min(v, 0.4), "stage1": 1.0}, artifacts={"stderr": "stage one ran", "feedback": "x" * 50000})

def evaluate_stage2(program_path):
    v = _value(program_path)
    return {"combined_score": v, "stage2": 1.0}

def evaluate(program_path):
    return evaluate_stage2(program_path)
`;

describe("upstream task folders, unmodified", () => {
  const folder = (thresholds: number[]) => {
    const dir = makeTask(OPENEVOLVE_EVALUATOR, {
      seed: "# EVOLVE-BLOCK-START\nV = 0.9\n# EVOLVE-BLOCK-END\ndef run():\n    return V\n",
    });
    write(
      join(dir, "config.yaml"),
      `prompt:\n  system_message: an OpenEvolve task\nevaluator:\n  timeout: 30\n  cascade_evaluation: true\n  cascade_thresholds: [${thresholds.join(", ")}]\n`,
    );
    return dir;
  };

  it("imports openevolve.evaluation_result without OpenEvolve installed and keeps artifacts", async () => {
    const t = loadTaskFolder(folder([0.3]));
    const e = await evaluateProgram(t, t.seedProgram);
    expect(e).toMatchObject({ valid: true, score: 0.9 });
    expect(e.metrics).toMatchObject({ stage1: 1, stage2: 1, cascade_stage: 2 });
    expect(e.artifacts.stderr).toContain("stage one ran");
    expect(String(e.artifacts.feedback).length).toBe(50000);
  });

  it("hands the artifacts to the executor cut to a bound", async () => {
    const t = loadTaskFolder(folder([0.3]));
    const env = new DiscoveryEnvironment({
      task: t,
      startProgram: t.seedProgram,
      maxEvals: 2,
      evaluate: (p) => evaluateProgram(t, p),
    });
    const seen = JSON.parse((await env.call("evaluate_program", {})).output);
    expect(seen.feedback).toContain("stage one ran");
    expect(seen.feedback.length).toBeLessThanOrEqual(2100);
  });

  it("stops the cascade when a stage misses its threshold", async () => {
    const t = loadTaskFolder(folder([0.5]));
    const e = await evaluateProgram(t, t.seedProgram);
    expect(e.metrics).toMatchObject({ combined_score: 0.4, cascade_stage: 1 });
    expect(e.metrics.stage2).toBeUndefined();
  });
});

// Three stages, as OpenEvolve's cascade runs them: stage 3 is judged on stages 1 and 2 merged, and a stage past the
// first that raises keeps what the stages before it gave.
const STAGED_EVALUATOR = `
${VALUE_OF}
def evaluate_stage1(program_path):
    _value(program_path)
    return {"combined_score": 0.6, "note": "first"}

def evaluate_stage2(program_path):
    v = _value(program_path)
    if v < 0:
        raise ValueError("stage two broke")
    return {"accuracy": v}

def evaluate_stage3(program_path):
    return {"combined_score": 1.0, "stage3": 1.0}
`;

describe("OpenEvolve's cascade, through the evaluator runner", () => {
  const staged = (v: number) => {
    const dir = makeTask(STAGED_EVALUATOR, {
      seed: `# EVOLVE-BLOCK-START\nV = ${v}\n# EVOLVE-BLOCK-END\ndef run():\n    return V\n`,
    });
    write(
      join(dir, "config.yaml"),
      "prompt:\n  system_message: staged\nevaluator:\n  timeout: 30\n  cascade_evaluation: true\n  cascade_thresholds: [0.5, 0.75]\n",
    );
    return loadTaskFolder(dir);
  };

  it("judges stage 3 on the merged metrics: stage 1's combined_score stands against stage 2's mean", async () => {
    const t = staged(0.9);
    const e = await evaluateProgram(t, t.seedProgram);
    expect(e).toMatchObject({ valid: true, score: 0.6 });
    expect(e.metrics).toEqual({ combined_score: 0.6, accuracy: 0.9, cascade_stage: 2 });
  });

  it("keeps stage 1's result when stage 2 raises", async () => {
    const t = staged(-1);
    const e = await evaluateProgram(t, t.seedProgram);
    expect(e).toMatchObject({ valid: true, score: 0.6 });
    expect(e.metrics).toMatchObject({ combined_score: 0.6, note: "first", stage2_passed: 0, cascade_stage: 2 });
    expect(e.artifacts).toMatchObject({ failure_stage: "stage2", stage2_stderr: "stage two broke" });
  });
});

describe("task registry and manifest", () => {
  const suite = () => {
    const dir = tempDir("hone-suite-");
    const a = makeTask("def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
    write(
      join(dir, "tasks.yaml"),
      `tasks:\n  - id: alpha\n    path: ${a}\n    direction: minimize\n    domain: lab\n    timeout: 7\n    env: { LAB_FLAG: "1" }\n`,
    );
    return dir;
  };
  it("reads a folder and its manifest, applying the overrides", () => {
    const [entry] = readRegistry(suite());
    const t = loadEntry(entry as NonNullable<typeof entry>);
    expect(t).toMatchObject({ id: "alpha", direction: "minimize", domain: "lab", timeoutSec: 7, env: { LAB_FLAG: "1" } });
  });
  it.each([
    ["an unknown key", "tasks:\n  - id: alpha\n    path: x\n    colour: red\n", /tasks.0/],
    ["a bad id", "tasks:\n  - id: Alpha!\n    path: x\n", /tasks.0.id/],
    ["a path that is not a task folder", "tasks:\n  - id: alpha\n    path: ./nowhere\n", /tasks.0.path.*not a task folder/],
    ["a bad direction", "tasks:\n  - id: alpha\n    path: x\n    direction: up\n", /tasks.0.direction/],
  ])("refuses a manifest with %s, naming the field", (_n, yaml, message) => {
    const dir = tempDir("hone-suite-");
    write(join(dir, "tasks.yaml"), yaml);
    expect(() => readRegistry(dir)).toThrow(message);
  });
  it("names missing Python dependencies", () => {
    const dir = suite();
    write(
      join(dir, "tasks.yaml"),
      `tasks:\n  - id: alpha\n    path: ${makeTask("def evaluate(p):\n    return {}\n")}\n    dependencies: [numpy, surely_not_installed_mod]\n`,
    );
    const [entry] = readRegistry(dir);
    expect(() => loadEntry(entry as NonNullable<typeof entry>)).toThrow(/dependencies.*surely_not_installed_mod/);
  });
});
