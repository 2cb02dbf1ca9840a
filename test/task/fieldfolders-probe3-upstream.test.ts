import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DiscoveryEnvironment } from "../../src/runtime/discovery-env.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { evaluateProgram, judgeExit } from "../../src/task/evaluator.ts";
import { looksLikeTaskFolder } from "../../src/task/layouts.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// Shapes of the field's folders found by running hone on the upstream repositories' own folders.

/** OpenEvolve's examples/r_robust_regression: the seed is `initial_program.r` (config `file_suffix: ".r"`). */
function otherLanguageFolder(seeds: Record<string, string>): string {
  const dir = tempDir("hone-rfolder-");
  for (const [name, text] of Object.entries(seeds)) write(join(dir, name), text);
  write(
    join(dir, "evaluator.py"),
    `import os, re

def evaluate(program_path):
    text = open(program_path).read()
    m = re.search(r"x <- ([0-9.]+)", text)
    return {"combined_score": float(m.group(1)) if m else 0.0, "suffix_ok": 1.0 if program_path.endswith(".r") else 0.0}
`,
  );
  write(
    join(dir, "config.yaml"),
    'language: "r"\nfile_suffix: ".r"\nprompt:\n  system_message: an R task\nevaluator:\n  timeout: 20\n',
  );
  return dir;
}

const R_SEED = "# EVOLVE-BLOCK-START\nx <- 3\n# EVOLVE-BLOCK-END\nprint(x)\n";

describe("a seed program in another language (initial_program.<ext>)", () => {
  it("loads OpenEvolve's r_robust_regression shape and hands the evaluator a file with the seed's extension", async () => {
    const dir = otherLanguageFolder({ "initial_program.r": R_SEED });
    expect(looksLikeTaskFolder(dir)).toBe(true);
    const t = loadTaskFolder(dir);
    expect(t.seedPath).toBe(join(dir, "initial_program.r"));
    expect(t.programExtension).toBe(".r");
    const e = await evaluateProgram(t, t.seedProgram.replace("x <- 3", "x <- 4.5"));
    expect(e).toMatchObject({ valid: true, score: 4.5 });
    expect(e.metrics.suffix_ok).toBe(1);
  });

  it("refuses a folder with several such seeds, naming each", () => {
    const dir = otherLanguageFolder({ "initial_program.r": R_SEED, "initial_program.jl": "x = 3\n" });
    expect(() => loadTaskFolder(dir)).toThrow(/several seed programs \(initial_program\.jl, initial_program\.r\)/);
  });

  it("says what a folder has instead of a seed: a program of several files, or a prompt", () => {
    const multi = otherLanguageFolder({ "initial_program/TSP.cpp": "int main() {}\n", "initial_program/config.json": "{}\n" });
    expect(() => loadTaskFolder(multi)).toThrow(/initial_program: is a folder: the seed is a program of several files/);
    const prompt = otherLanguageFolder({ "initial_prompt.txt": "Answer the question.\n" });
    expect(() => loadTaskFolder(prompt)).toThrow(/initial_prompt\.txt: is a prompt to optimize, not a program/);
  });

  it("does not take notes or backups beside the seed for seeds", () => {
    const dir = otherLanguageFolder({
      "initial_program.r": R_SEED,
      "initial_program.md": "notes\n",
      "init_program.r.bak": "x\n",
    });
    expect(loadTaskFolder(dir).seedPath).toBe(join(dir, "initial_program.r"));
  });

  it("still prefers the known names and says what else it looks for when there is none", () => {
    const dir = otherLanguageFolder({
      "initial_program.r": R_SEED,
      "initial_program.py": "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n",
    });
    expect(loadTaskFolder(dir).seedPath).toBe(join(dir, "initial_program.py"));
    const none = otherLanguageFolder({ "README.md": "no seed\n" });
    expect(() => loadTaskFolder(none)).toThrow(/has no seed program; .*initial_program\.<ext>/);
  });
});

describe("an EvaluationResult's named artifacts reach the executor, as OpenEvolve puts them in the next prompt", () => {
  const evaluation = (artifacts: Evaluation["artifacts"]): Evaluation => ({
    valid: true,
    score: 0.36,
    metrics: { combined_score: 0.36, validity: 1 },
    artifacts,
    seconds: 0.1,
  });
  const seen = async (artifacts: Evaluation["artifacts"]) => {
    const env = new DiscoveryEnvironment({
      task: { metric: "combined_score", direction: "maximize" },
      startProgram: "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n",
      maxEvals: 2,
      evaluate: async () => evaluation(artifacts),
    });
    return JSON.parse((await env.call("evaluate_program", {})).output) as { feedback?: string };
  };

  it("shows circle_packing_with_artifacts' packing_summary and a cascade's stage2_stderr", async () => {
    const out = await seen({
      stdout: "the evaluator's own prints",
      packing_summary: "Sum of radii: 0.959764/2.635 = 0.3642",
      stage2_stderr: "stage two broke",
      radius_stats: { min: 0.01, max: 0.2 },
      stderr: "a warning",
    });
    expect(out.feedback).toContain("packing_summary: Sum of radii: 0.959764/2.635 = 0.3642");
    expect(out.feedback).toContain("stage2_stderr: stage two broke");
    expect(out.feedback).toContain('radius_stats: {"min":0.01,"max":0.2}');
    expect(out.feedback).toContain("a warning");
    expect(out.feedback).not.toContain("the evaluator's own prints");
  });

  it("shows k_module_problem's hints, returned as an artifacts dict among its metrics, as OpenEvolve's prompt lists them", async () => {
    const env = new DiscoveryEnvironment({
      task: { metric: "combined_score", direction: "maximize" },
      startProgram: "x = 1\n",
      maxEvals: 2,
      evaluate: async () => ({
        valid: true,
        score: 0.25,
        metrics: {
          combined_score: 0.25,
          correct_modules: 1,
          artifacts: { status: "Needs improvement: 1/4 modules correct." },
          ratio: { __nonfinite__: "nan" },
        },
        artifacts: {},
        seconds: 0.1,
      }),
    });
    const out = JSON.parse((await env.call("evaluate_program", {})).output) as { feedback?: string; metrics?: object };
    expect(out.feedback).toContain('artifacts: {"status":"Needs improvement: 1/4 modules correct."}');
    expect(out.feedback).not.toContain("__nonfinite__");
    expect(out.metrics).toEqual({ correct_modules: 1 });
  });

  it("keeps tracebacks (they quote the evaluator's source) and stdout out, and the whole within its bound", async () => {
    const out = await seen({
      traceback: 'File "evaluator.py", line 9, in evaluate\n    SECRET = 42',
      stage3_traceback: "SECRET = 42",
      validation_report: "v".repeat(10_000),
    });
    expect(out.feedback).not.toContain("SECRET");
    expect(out.feedback).toContain("validation_report: vvv");
    expect((out.feedback ?? "").length).toBeLessThanOrEqual(2100);
  });
});

describe("an evaluator that cannot see data beside its folder (SimpleTES's ahc039 reads ../cache)", () => {
  const family = () => {
    const root = tempDir("hone-family-");
    write(join(root, "cache", "inputs", "0000.txt"), "1\n");
    const dir = join(root, "ahc039");
    write(join(dir, "init_program.py"), "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n");
    write(
      join(dir, "evaluator.py"),
      'from pathlib import Path\nCACHE = Path(__file__).parent.parent / "cache"\n\ndef evaluate(p):\n    return {"combined_score": 0.0}\n',
    );
    write(join(dir, "ahc039.txt"), "an AtCoder task\n");
    return { root, task: loadTaskFolder(dir) };
  };
  const exit = (result: unknown) => ({
    code: 0,
    signal: null,
    timedOut: false,
    result: JSON.stringify(result),
    stdout: "",
    stderr: "",
    seconds: 0.1,
  });

  it("says the path exists outside the task folder and which hone.yaml key shows it", () => {
    const { root, task } = family();
    const missing = join(root, "cache", "inputs");
    const e = judgeExit(
      task,
      exit({ metrics: { combined_score: 0, validity: 0, error: `Input cache not found: ${missing}. Run get_cache.sh first.` } }),
      30,
    );
    expect(e.valid).toBe(false);
    expect(e.reason).toContain(`${join(root, "cache")} exists on this machine, but outside the task folder`);
    expect(e.reason).toContain("add ../cache to evaluator_read_only: in the task folder's hone.yaml");
  });

  it("says it for an evaluator that raised too, and nothing for paths that do not exist or that it is shown", () => {
    const { root, task } = family();
    const raised = judgeExit(
      task,
      {
        ...exit({
          error: `FileNotFoundError: [Errno 2] No such file or directory: '${join(root, "cache", "inputs", "0000.txt")}'`,
        }),
        code: 1,
      },
      30,
    );
    expect(raised.reason).toContain("add ../cache to evaluator_read_only");
    const absent = judgeExit(task, exit({ metrics: { validity: 0, error: `not found: ${join(root, "nothing", "here")}` } }), 30);
    expect(absent.reason).not.toContain("exists on this machine");
    const shown = judgeExit(
      { ...task, evaluatorReadOnly: [join(root, "cache")] },
      exit({ metrics: { validity: 0, error: `not found: ${join(root, "cache", "inputs")}` } }),
      30,
    );
    expect(shown.reason).not.toContain("exists on this machine");
  });
});

describe("a folder whose config turns artifacts off (OpenEvolve's prompt.include_artifacts, evaluator.enable_artifacts)", () => {
  const folder = (config: string) => {
    const dir = tempDir("hone-noartifacts-");
    write(join(dir, "initial_program.py"), "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n");
    write(join(dir, "evaluator.py"), 'def evaluate(program_path):\n    return {"combined_score": 1.0}\n');
    write(join(dir, "config.yaml"), `prompt:\n  system_message: a task\n${config}`);
    return dir;
  };

  it("is read as not showing them, and shows them by default as upstream does", () => {
    expect(loadTaskFolder(folder("  include_artifacts: false\n")).showArtifacts).toBe(false);
    expect(loadTaskFolder(folder("evaluator:\n  enable_artifacts: false\n")).showArtifacts).toBe(false);
    expect(loadTaskFolder(folder("")).showArtifacts).toBe(true);
  });

  it("keeps the named artifacts and structured metrics out of the feedback, and still shows feedback and stderr", async () => {
    const env = new DiscoveryEnvironment({
      task: { metric: "combined_score", direction: "maximize", showArtifacts: false },
      startProgram: "x = 1\n",
      maxEvals: 2,
      evaluate: async () => ({
        valid: true,
        score: 0.3,
        metrics: { combined_score: 0.3, hints: { status: "expected output 42" } },
        artifacts: { feedback: "try more", packing_summary: "hidden 42", stderr: "a warning" },
        seconds: 0.1,
      }),
    });
    const out = JSON.parse((await env.call("evaluate_program", {})).output) as { feedback?: string };
    expect(out.feedback).toContain("try more");
    expect(out.feedback).toContain("a warning");
    expect(out.feedback).not.toContain("42");
  });
});
