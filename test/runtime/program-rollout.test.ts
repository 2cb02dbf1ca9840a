import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applySpec, SpecError } from "../../src/harness/compile.ts";
import { loadHarness } from "../../src/harness/package.ts";
import { solveTask } from "../../src/loop/qa-task.ts";
import { type ResolvedModel, resolveModel } from "../../src/model/resolve.ts";
import { runRollout } from "../../src/runtime/rollout.ts";
import { MemoryTrajectory } from "../../src/store/trajectory.ts";
import { resolveTask } from "../../src/task/builtin.ts";
import type { DiscoveryTask } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A harness program as a rollout and as a QA solver: loaded as a Harness that says it is a program, run sealed,
// and what it leaves is evaluated once (discovery) or scored by the official rule (QA).
const EXAMPLE = join(ROOT, "harnesses", "examples", "program-harness");

function programHarness(code: string): string {
  const dir = join(tempDir(), "h");
  mkdirSync(dir);
  writeFileSync(join(dir, "harness.json"), JSON.stringify({ name: "probe", entrypoint: "python3 main.py", timeout: 60 }));
  const args =
    "import argparse, json, os\np = argparse.ArgumentParser(); p.add_argument('--task'); p.add_argument('--workdir'); a = p.parse_args()\n";
  writeFileSync(join(dir, "main.py"), args + code);
  return dir;
}

describe("harness programs in rollouts and QA tasks", () => {
  let offline: ResolvedModel;
  let task: DiscoveryTask;
  beforeAll(async () => {
    offline = await resolveModel({ model: "offline" });
    task = await resolveTask("circle-packing");
  });
  afterAll(() => offline.close());

  const rollout = async (dir: string, maxEvals = 5) => {
    const trajectory = new MemoryTrajectory();
    const start = await evaluateProgram(task, task.seedProgram);
    const evaluated: string[] = [];
    const outcome = await runRollout({
      harness: loadHarness(dir),
      task,
      model: offline.model,
      evaluate: (p) => {
        evaluated.push(p);
        return evaluateProgram(task, p);
      },
      maxEvals,
      seed: 3,
      trajectory,
      startEvaluation: start,
    });
    return { outcome, trajectory, evaluated, start };
  };

  it("loads as a Harness that says it is a program, which no spec can change", () => {
    const h = loadHarness(EXAMPLE);
    expect(h.program?.entrypoint).toEqual(["python3", "harness.py"]);
    expect(h.tools).toEqual([]);
    expect(h.files.sort()).toEqual(["harness.json", "harness.py", "prompt.md"]);
    expect(() => applySpec(EXAMPLE, { system_prompt: "x" }, join(tempDir(), "c"))).toThrow(SpecError);
  });

  it("evaluates what the example program left, once, whatever the budget", async () => {
    const { outcome, trajectory, evaluated } = await rollout(EXAMPLE);
    expect(outcome.status).toBe("completed");
    expect(outcome.evaluations.used).toBe(1);
    expect(evaluated).toHaveLength(1);
    expect(evaluated[0]).not.toBe(task.seedProgram); // the offline model perturbed the EVOLVE block
    expect(outcome.usage.model_calls).toBe(1);
    expect(outcome.usage.prompt_tokens).toBeGreaterThan(0);
    const types = trajectory.events.map((e) => e.type);
    expect(types).toEqual([
      "rollout_start",
      "harness_program",
      "model_call",
      "harness_program_exit",
      "evaluation",
      "rollout_end",
    ]);
  });

  it("does not evaluate a program edited outside its EVOLVE block, or with no budget left", async () => {
    const outside = programHarness(
      "t = json.load(open(a.task)); f = os.path.join(a.workdir, t['program_file'])\nopen(f, 'a').write('\\nimport os\\n')\n",
    );
    const r = await rollout(outside);
    expect(r.evaluated).toHaveLength(0);
    expect(r.outcome.error).toMatch(/not evaluated: .*outside/i);
    expect(r.outcome.bestScore).toBe(r.start.score);
    const none = await rollout(EXAMPLE, 0);
    expect(none.evaluated).toHaveLength(0);
    expect(none.outcome.error).toMatch(/budget is 0/);
  });

  it("a program that crashes leaves the start as the best, with its error", async () => {
    const r = await rollout(programHarness("raise SystemExit(3)\n"));
    expect(r.evaluated).toHaveLength(0);
    expect(r.outcome).toMatchObject({ status: "completed", improved: false, error: expect.stringMatching(/code 3/) });
  });

  it("solves a GSM8K question by running the program; answer.txt scored by the official rule", async () => {
    const q = { id: "q1", question: "Tom has 3 apples and buys 4 more, then 7 pears. How many pears?", gold: "x\n#### 7" };
    const t = new MemoryTrajectory();
    const r = await solveTask(loadHarness(EXAMPLE), offline.model, "gsm8k", q, 0, t);
    expect(r).toMatchObject({ status: "completed", correct: true, score: 1, modelCalls: 1 });
    expect(r.answer).toBe("#### 7");
    const wrong = await solveTask(loadHarness(EXAMPLE), offline.model, "gsm8k", { ...q, gold: "x\n#### 14" }, 0, t);
    expect(wrong).toMatchObject({ status: "completed", correct: false, score: 0 });
  });
});
