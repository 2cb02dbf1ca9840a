import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// Upstream folders copied unmodified (test/fixtures/upstream/*/PROVENANCE.md) and folders in the field's layouts
// written for these tests (test/fixtures/layouts/README.md), run through the CLI as a user would.
const UP = join(ROOT, "test", "fixtures", "upstream");
const LAYOUTS = join(ROOT, "test", "fixtures", "layouts");
const OE_CIRCLES = join(UP, "openevolve", "circle_packing");
const OE_SIGNAL = join(UP, "openevolve", "signal_processing");
const SKY_HEILBRONN = join(UP, "skydiscover", "math", "heilbronn_triangle");
const SKY_TXN = join(UP, "skydiscover", "ADRS", "txn_scheduling");
const SIMPLETES = join(LAYOUTS, "simpletes", "sum_to_ten");
const HARNESSTTT = join(LAYOUTS, "harnessttt");
/** Upstream evaluators run their programs in subprocesses with their own waits; a shared machine makes them slow. */
const LONG = 300_000;

async function offlineRun(task: string, extra: string[] = [], cwd?: string) {
  const out = join(tempDir(), "run");
  const r = await hone(["run", "--task", task, "--model", "offline", "--max-evals", "3", "--out", out, "--json", ...extra], {
    cwd,
    timeoutMs: 240_000,
  });
  expect(r.code, r.stderr).toBe(0);
  const result = JSON.parse(readFileSync(join(out, "result.json"), "utf8"));
  expect(result).toMatchObject({ status: "completed", start_valid: true });
  expect(result.evaluations.used).toBe(3);
  return result;
}

async function evaluateJson(task: string, program: string, extra: string[] = []) {
  const r = await hone(["evaluate", "--task", task, program, "--json", ...extra], { timeoutMs: 240_000 });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

async function showJson(task: string, extra: string[] = []) {
  const r = await hone(["tasks", "show", task, "--json", ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

describe("OpenEvolve's examples, unmodified", { timeout: LONG }, () => {
  it("runs the README's example: circle_packing, which has only config_phase_N.yaml, from its first phase", async () => {
    const cwd = tempDir();
    cpSync(OE_CIRCLES, join(cwd, "openevolve", "examples", "circle_packing"), { recursive: true });
    const result = await offlineRun("./openevolve/examples/circle_packing", [], cwd);
    expect(result.start_score).toBeCloseTo(0.9598 / 2.635, 3);
    const show = await showJson(OE_CIRCLES);
    expect(show).toMatchObject({ id: "circle_packing", layout: "openevolve", timeout_sec: 60, phase: { n: 1, all: [1, 2] } });
    expect(show.config).toMatch(/config_phase_1\.yaml$/);
    expect(show.cascade).toEqual({ enabled: true, thresholds: [0.5, 0.75] });
  });

  it("chooses a phase with --phase, for run, evaluate and tasks show, and names the phases a folder has", async () => {
    const show = await showJson(OE_CIRCLES, ["--phase", "2"]);
    expect(show).toMatchObject({ id: "circle_packing-phase2", timeout_sec: 90, cascade: { thresholds: [0.5, 0.8] } });
    expect(show.description).toMatch(/plateaued at 2.377/);
    await offlineRun(OE_CIRCLES, ["--phase", "2"]);
    const e = await evaluateJson(OE_CIRCLES, join(OE_CIRCLES, "initial_program.py"), ["--phase", "2"]);
    expect(e).toMatchObject({ task: "circle_packing-phase2", valid: true });
    const bad = await hone(["evaluate", "--task", OE_CIRCLES, join(OE_CIRCLES, "initial_program.py"), "--phase", "3"]);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/config_phase_3\.yaml; its phases are 1, 2/);
    const notFolder = await hone(["evaluate", "--task", "circle-packing", "x.py", "--phase", "2"]);
    expect(notFolder.code).toBe(2);
    expect(notFolder.stderr).toMatch(/--phase takes a task folder/);
  });

  it("scores signal_processing, which returns no combined_score, by OpenEvolve's mean of the numeric metrics", async () => {
    const e = await evaluateJson(OE_SIGNAL, join(OE_SIGNAL, "initial_program.py"));
    expect(e.valid).toBe(true);
    expect(e.metrics.combined_score).toBeUndefined();
    const numbers = Object.entries(e.metrics).filter(
      ([k, v]) => typeof v === "number" && !["cascade_stage", "complexity", "diversity"].includes(k),
    );
    expect(numbers.length).toBeGreaterThan(10);
    expect(e.score).toBeCloseTo(numbers.reduce((a, [, v]) => a + (v as number), 0) / numbers.length, 9);
    const show = await hone(["tasks", "show", OE_SIGNAL]);
    expect(show.stdout).toMatch(/as OpenEvolve does\) the mean of its numeric metrics/);
    await offlineRun(OE_SIGNAL);
  });
});

describe("SkyDiscover's benchmarks, evaluator in evaluator/", { timeout: LONG }, () => {
  it.each([
    ["math/heilbronn_triangle", SKY_HEILBRONN, 0],
    ["ADRS/txn_scheduling", SKY_TXN, 2000],
  ])("%s runs and evaluates with its config's timeout", async (_name, dir, atLeast) => {
    const show = await showJson(dir);
    expect(show).toMatchObject({ layout: "skydiscover", cascade: { enabled: false } });
    expect(show.evaluator).toMatch(/evaluator\/evaluator\.py$/);
    expect(show.timeout_sec).toBe(dir === SKY_TXN ? 600 : 360);
    const e = await evaluateJson(dir, join(dir, "initial_program.py"));
    expect(e.valid).toBe(true);
    expect(e.score).toBeGreaterThanOrEqual(atLeast);
    await offlineRun(dir);
  });
});

describe("SimpleTES's layout: init_program.py, evaluator.py and <task>.txt", { timeout: LONG }, () => {
  it("runs, with simpletes.construction provided and SimpleTES's default timeout", async () => {
    const show = await showJson(SIMPLETES);
    expect(show).toMatchObject({ id: "sum_to_ten", layout: "simpletes", timeout_sec: 3000 });
    expect(show.description).toMatch(/sum is as close to 10/);
    const e = await evaluateJson(SIMPLETES, join(SIMPLETES, "init_program.py"));
    expect(e).toMatchObject({ valid: true, metrics: { captured: false } });
    expect(e.score).toBeCloseTo(1 / 5 - 0.003, 12);
    await offlineRun(SIMPLETES);
  });
});

describe("HarnessTTT's task manifest", { timeout: LONG }, () => {
  it("lists its scorable records beside tasks.yaml's entries, with their settings", async () => {
    const r = await hone(["tasks", "--tasks-dir", HARNESSTTT, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const ids = (JSON.parse(r.stdout) as { id: string }[]).map((t) => t.id);
    expect(ids).toEqual(["adrs__txn_scheduling", "circle-packing-phase2", "math__heilbronn_triangle", "simpletes__sum_to_ten"]);
    const show = await showJson("math__heilbronn_triangle", ["--tasks-dir", HARNESSTTT]);
    expect(show).toMatchObject({ timeout_sec: 120, domain: "mathematics", declared_needs: ["numpy", "scipy"] });
    const phase = await showJson("circle-packing-phase2", ["--tasks-dir", HARNESSTTT]);
    expect(phase).toMatchObject({ timeout_sec: 90, phase: { n: 2 } });
  });

  it("runs a task given by a record, from the folder or from the manifest file itself", async () => {
    await offlineRun("math__heilbronn_triangle", ["--tasks-dir", HARNESSTTT]);
    const e = await evaluateJson("simpletes__sum_to_ten", join(SIMPLETES, "init_program.py"), [
      "--tasks-dir",
      join(HARNESSTTT, "MANIFEST_eft.json"),
    ]);
    expect(e).toMatchObject({ task: "simpletes__sum_to_ten", valid: true });
  });

  it("names the record and field of a bad manifest", async () => {
    const dir = tempDir();
    write(join(dir, "MANIFEST_eft.json"), JSON.stringify({ tasks: [{ task_id: "a b", rel_path: "x" }] }));
    const r = await hone(["tasks", "--tasks-dir", dir]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/MANIFEST_eft\.json \(tasks\.0\.task_id\)/);
  });
});

describe("a folder that needs what is not installed is refused before it runs (exit 4)", { timeout: LONG }, () => {
  const folder = (evaluator: string, seedTop = "") => {
    const dir = tempDir("hone-needs-");
    write(join(dir, "initial_program.py"), `${seedTop}# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n`);
    write(join(dir, "evaluator.py"), evaluator);
    write(join(dir, "config.yaml"), "prompt:\n  system_message: a task that needs something\n");
    return dir;
  };
  const SCORE = "def evaluate(program_path):\n    return {'combined_score': 1.0}\n";

  it("names the missing module, where it is imported and what to do; tasks show says it without refusing", async () => {
    const dir = folder(SCORE, "import os\nimport surely_missing_mod_a.sub as s\n");
    write(join(dir, "requirements.txt"), "surely-missing-mod-a>=1\n");
    const r = await hone(["run", "--task", dir, "--model", "offline", "--out", join(tempDir(), "r")]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/surely_missing_mod_a \(initial_program\.py:2\)/);
    expect(r.stderr).toMatch(
      /install surely_missing_mod_a for that interpreter \(requirements\.txt lists: surely-missing-mod-a>=1\)/,
    );
    const show = await hone(["tasks", "show", dir]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/cannot run here: needs Python modules .*surely_missing_mod_a/);
  });

  it("follows the evaluator's local modules and ignores optional, lazy and __main__ imports", async () => {
    const dir = folder(
      [
        "import helper",
        "try:\n    import surely_missing_opt\nexcept ImportError:\n    surely_missing_opt = None",
        "def evaluate(program_path):\n    import surely_missing_lazy\n    return {'combined_score': 1.0}",
        "if __name__ == '__main__':\n    import surely_missing_main",
      ].join("\n"),
    );
    write(join(dir, "helper.py"), "import math\nfrom surely_missing_deep import thing\n");
    const r = await hone(["evaluate", "--task", dir, join(dir, "initial_program.py")]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/surely_missing_deep \(helper\.py:2\)/);
    expect(r.stderr).not.toMatch(/surely_missing_(opt|lazy|main)/);
  });

  it.skipIf(existsSync("/dev/nvidiactl"))("names the GPU a GPU-only module needs", async () => {
    const dir = folder(`import triton\n${SCORE}`);
    write(join(dir, "triton.py"), "# stands in for the real package: importable, but there is no GPU here\n");
    const r = await hone(["evaluate", "--task", dir, join(dir, "initial_program.py")]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/needs an NVIDIA GPU for triton/);
  });

  it("says a container-only evaluator needs Docker", async () => {
    const dir = folder(SCORE);
    const sky = tempDir("hone-container-");
    cpSync(join(dir, "initial_program.py"), join(sky, "initial_program.py"));
    cpSync(join(dir, "config.yaml"), join(sky, "config.yaml"));
    write(join(sky, "evaluator", "Dockerfile"), "FROM python:3.12-slim\n");
    write(join(sky, "evaluator", "evaluate.sh"), '#!/bin/sh\n/opt/score "$1"\n');
    const r = await hone(["evaluate", "--task", sky, join(sky, "initial_program.py")]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/evaluator\/Dockerfile: this task's evaluator is a container .* needs Docker/);
  });
});
