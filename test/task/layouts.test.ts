import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { withPhase } from "../../src/task/builtin.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { readHarnessManifest } from "../../src/task/harnessttt-manifest.ts";
import { detectLayout, looksLikeTaskFolder } from "../../src/task/layouts.ts";
import { loadEntry, readRegistry } from "../../src/task/registry.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

const SEED = "# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\n";
const EVAL = "def evaluate(program_path):\n    return {'combined_score': 1.0}\n";

function folder(files: Record<string, string>): string {
  const dir = tempDir("hone-layout-");
  for (const [name, text] of Object.entries(files)) write(join(dir, name), text);
  return dir;
}
const phaseYaml = (n: number, timeout: number) => `prompt:\n  system_message: phase ${n}\nevaluator:\n  timeout: ${timeout}\n`;

describe("OpenEvolve phases", () => {
  const phased = () =>
    folder({
      "initial_program.py": SEED,
      "evaluator.py": EVAL,
      "config_phase_2.yaml": phaseYaml(2, 90),
      "config_phase_10.yaml": phaseYaml(10, 120),
      "config_phase_2_anthropic.yaml": phaseYaml(99, 1),
    });

  it("defaults to the first phase (numerically) and ignores variants of a phase file", () => {
    const t = loadTaskFolder(phased());
    expect(t).toMatchObject({ description: "phase 2", timeoutSec: 90, phase: { n: 2, all: [2, 10] } });
  });

  it("loads a chosen phase under its own id, through a config-file reference", () => {
    const dir = phased();
    const t = loadTaskFolder(withPhase(dir, 10));
    expect(t).toMatchObject({ description: "phase 10", timeoutSec: 120, id: expect.stringMatching(/-phase10$/) });
    expect(() => withPhase(dir, 3)).toThrow(/its phases are 2, 10/);
    expect(() => withPhase(dir, 0)).toThrow(/whole number/);
  });

  it("prefers config.yaml when there is one, and gives phases their own ids then", () => {
    const dir = phased();
    write(join(dir, "config.yaml"), phaseYaml(0, 30));
    expect(loadTaskFolder(dir)).toMatchObject({ description: "phase 0", phase: undefined });
    expect(loadTaskFolder(withPhase(dir, 2)).id).toMatch(/-phase2$/);
  });
});

describe("layout detection", () => {
  it("finds SkyDiscover's evaluator/evaluator.py, and keeps a root evaluator.py first", () => {
    const sky = folder({ "initial_program.py": SEED, "evaluator/evaluator.py": EVAL, "config.yaml": phaseYaml(1, 600) });
    expect(detectLayout(sky)).toMatchObject({ layout: "skydiscover", evaluatorPath: join(sky, "evaluator", "evaluator.py") });
    expect(loadTaskFolder(sky)).toMatchObject({ cascade: { enabled: false }, metricFallback: { rule: "none" } });
    write(join(sky, "evaluator.py"), EVAL);
    expect(detectLayout(sky)).toMatchObject({ layout: "openevolve", evaluatorPath: join(sky, "evaluator.py") });
  });

  it("reads SimpleTES's instruction from <folder>.txt, else its only non-requirements .txt", () => {
    const dir = folder({ "init_program.py": SEED, "evaluator.py": EVAL, "notes.txt": "the task", "requirements.txt": "numpy" });
    expect(loadTaskFolder(dir)).toMatchObject({ layout: "simpletes", description: "the task", timeoutSec: 3000 });
    write(join(dir, "other.txt"), "ambiguous");
    expect(() => loadTaskFolder(dir)).toThrow(/no description.*\.txt/);
  });

  it("applies OpenEvolve's defaults when the config is silent: 300 s, cascade when stages exist, the mean rule", () => {
    const staged = `${EVAL}def evaluate_stage1(program_path):\n    return {'combined_score': 1.0}\n`;
    const t = loadTaskFolder(
      folder({ "initial_program.py": SEED, "evaluator.py": staged, "config.yaml": "prompt:\n  system_message: x\n" }),
    );
    expect(t).toMatchObject({ timeoutSec: 300, cascade: { enabled: true, thresholds: [0.5, 0.75, 0.9] } });
    expect(t.metricFallback).toEqual({ rule: "mean", exclude: ["complexity", "diversity"] });
  });

  it("keys the fallback to the metric setting: an explicit metric in hone.yaml is hone's contract", () => {
    const base = {
      "initial_program.py": SEED,
      "evaluator.py": EVAL,
      "config.yaml": "prompt:\n  system_message: x\ndatabase:\n  feature_dimensions: [spread]\n",
    };
    expect(loadTaskFolder(folder(base)).metricFallback).toEqual({ rule: "mean", exclude: ["spread"] });
    expect(loadTaskFolder(folder({ ...base, "hone.yaml": "metric: combined_score\n" })).metricFallback.rule).toBe("none");
    expect(loadTaskFolder(folder({ ...base, "hone.yaml": "direction: minimize\n" })).metricFallback.rule).toBe("mean");
    const chosen = folder({ ...base, "hone.yaml": "metric: combined_score\nmetric_fallback: mean\n" });
    expect(loadTaskFolder(chosen).metricFallback.rule).toBe("mean");
  });

  it("refuses a named seed or evaluator outside the task folder, which its sandbox would not see", () => {
    const dir = folder({ "initial_program.py": SEED, "evaluator.py": EVAL });
    const outside = folder({ "evaluator.py": EVAL });
    expect(() => detectLayout(dir, { evaluator: join(outside, "evaluator.py") })).toThrow(/must lie inside the task folder/);
    expect(looksLikeTaskFolder(outside)).toBe(false);
  });
});

describe("manifests", () => {
  it("reads HarnessTTT records: defaults, timeouts, python_exe, extra_pythonpath, env, scorable", () => {
    const root = tempDir("hone-eft-");
    write(join(root, "raw", "a", "initial_program.py"), SEED);
    write(join(root, "raw", "a", "evaluator", "evaluator.py"), EVAL);
    write(join(root, "raw", "a", "config.yaml"), phaseYaml(1, 45));
    write(join(root, "runtime", "skydiscover_min", "README"), "shim");
    const record = {
      task_id: "eft__a",
      rel_path: "raw/a",
      evaluator_rel: "evaluator/evaluator.py",
      deps: ["numpy", "data.json"],
    };
    const manifest = {
      tasks: [
        { ...record, python_exe: "python3", extra_pythonpath: "lib", env: { K: "v" }, cost_tier: "tier0" },
        { ...record, task_id: "eft__b", per_eval_timeout_s: 7 },
        { ...record, task_id: "eft__c", scorable: false },
      ],
    };
    write(join(root, "MANIFEST_eft.json"), JSON.stringify(manifest));
    const tasks = readHarnessManifest(join(root, "MANIFEST_eft.json"));
    expect(tasks.map((t) => t.id)).toEqual(["eft__a", "eft__b"]);
    expect(tasks[0]?.pythonPath).toEqual([join(root, "runtime", "skydiscover_min"), join(root, "lib")]);
    const [a, b] = readRegistry(root).map(loadEntry);
    expect(a).toMatchObject({ id: "eft__a", timeoutSec: 45, env: { K: "v" }, declaredNeeds: ["numpy", "data.json"] });
    expect(b).toMatchObject({ id: "eft__b", timeoutSec: 7 });
  });

  it.each([
    ["a missing rel_path", { tasks: [{ task_id: "x" }] }, /tasks\.0\.rel_path/],
    ["a bad timeout", { tasks: [{ task_id: "x", rel_path: "a", per_eval_timeout_s: -1 }] }, /tasks\.0\.per_eval_timeout_s/],
    ["a folder that is no task", { tasks: [{ task_id: "x", rel_path: "nowhere" }] }, /tasks\.0\.rel_path.*not a task folder/],
  ])("refuses a HarnessTTT manifest with %s, naming the field", (_n, manifest, message) => {
    const root = tempDir("hone-eft-");
    write(join(root, "MANIFEST_eft.json"), JSON.stringify(manifest));
    expect(() => readRegistry(root)).toThrow(message);
  });

  it("lets a tasks.yaml entry choose a phase, and refuses one id in two manifests", () => {
    const root = tempDir("hone-suite-");
    const dir = join(root, "cp");
    for (const [n, t] of [
      [1, 60],
      [2, 90],
    ] as const)
      write(join(dir, `config_phase_${n}.yaml`), phaseYaml(n, t));
    write(join(dir, "initial_program.py"), SEED);
    write(join(dir, "evaluator.py"), EVAL);
    write(join(root, "tasks.yaml"), "tasks:\n  - id: cp-two\n    path: cp\n    phase: 2\n");
    expect(
      readRegistry(root)
        .map(loadEntry)
        .find((t) => t.id === "cp-two"),
    ).toMatchObject({ timeoutSec: 90 });
    write(join(root, "MANIFEST_eft.json"), JSON.stringify({ tasks: [{ task_id: "cp-two", rel_path: "cp" }] }));
    expect(() => readRegistry(root)).toThrow(/"cp-two" is listed twice/);
  });
});
