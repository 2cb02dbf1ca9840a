import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { evaluatorEntries } from "../../src/task/evaluator-entry.ts";
import { ROOT } from "../helpers/fixtures.ts";

// Whether an evaluator has an evaluate() is decided by what Python would bind at module level, never by a regex on
// `def evaluate(`: an import binding the name (SkyDiscover's gpu_mode), an `async def`, an assignment, or only the
// cascade's evaluate_stage1 (which the runner accepts) all count; a name bound only inside a function does not.

const SHAPES = join(ROOT, "test", "fixtures", "task-shapes");
const seedOf = (dir: string) => readFileSync(join(dir, "initial_program.py"), "utf8");

describe("evaluatorEntries", () => {
  it.each([
    ["a def", "def evaluate(p):\n    return {}\n", true, false],
    ["an async def", "async def evaluate(p):\n    return {}\n", true, false],
    ["an import", "import os\nfrom shared_eval import evaluate\n", true, false],
    ["an import in parentheses", "from shared_eval import (\n    helper,\n    evaluate,\n)\n", true, false],
    ["an import renamed", "from impl import score as evaluate\n", true, false],
    ["a module imported as it", "import scorer as evaluate\n", true, false],
    ["an assignment", "def _impl(p):\n    return {}\n\nevaluate = _impl\n", true, false],
    [
      "a try/except import",
      "try:\n    from fast import evaluate\nexcept ImportError:\n    from slow import evaluate\n",
      true,
      false,
    ],
    ["an if block", "import sys\nif sys.platform:\n    def evaluate(p):\n        return {}\n", true, false],
    ["a star import", "from shared_eval import *\n", true, true],
    ["a name bound through globals()", "def _impl(p):\n    return {}\n\nglobals()['evaluate'] = _impl\n", true, false],
    ["a walrus", "if (evaluate := __import__('scorer').score):\n    pass\n", true, false],
    ["a match capture", "match 1:\n    case evaluate:\n        pass\n", true, false],
    ["only evaluate_stage1", "def evaluate_stage1(p):\n    return {}\n", false, true],
    ["evaluate_stage1 imported", "from stages import evaluate_stage1\n", false, true],
    ["a name only inside a function", "def main():\n    evaluate = 1\n    return evaluate\n", false, false],
    ["a name only in a string", '"""call evaluate(program) to score"""\ndef main():\n    pass\n', false, false],
    ["a def of another name", "def evaluate_packing(p):\n    return {}\n", false, false],
  ])("%s", (_name, source, evaluate, stage1) => {
    expect(evaluatorEntries(source, "python3")).toMatchObject({ evaluate, stage1 });
  });

  it("says when the source is not Python", () => {
    expect(evaluatorEntries("from x import evaluate(\n", "python3").syntaxError).toMatch(/line 1/);
  });
});

describe("task folders whose evaluate() is not a plain def", () => {
  it.each([
    ["evaluate-imported", {}],
    ["evaluate-async", {}],
    ["stage1-only", { stage: 1, cascade_stage: 1 }],
  ])("%s loads and scores its seed", async (name, metrics) => {
    const dir = join(SHAPES, name);
    const task = loadTaskFolder(dir);
    const e = await evaluateProgram(task, seedOf(dir));
    expect(e.reason).toBeUndefined();
    expect(e).toMatchObject({ valid: true, score: 2, metrics });
  });

  it("runs the stages of an evaluator with no evaluate() when the cascade is off", async () => {
    const dir = join(SHAPES, "stage1-only");
    const task = { ...loadTaskFolder(dir), cascade: { enabled: false, thresholds: [] } };
    expect(await evaluateProgram(task, seedOf(dir))).toMatchObject({ valid: true, score: 2 });
  });

  it("refuses an evaluator that binds no evaluate, saying what would count", () => {
    expect(() => loadTaskFolder(join(SHAPES, "no-evaluate"))).toThrow(
      /evaluator.py \(evaluate\): binds no evaluate\(program_path\) \(nor evaluate_stage1\) at module level/,
    );
  });

  it("gives a container-only SkyDiscover evaluator (only main(), beside a Dockerfile) the Docker refusal", () => {
    expect(() => loadTaskFolder(join(SHAPES, "container-only"))).toThrow(
      /evaluator\/Dockerfile: this task's evaluator is a container whose evaluator\/evaluator.py defines no evaluate\(program_path\).*needs Docker/,
    );
  });
});
