// A module an evaluator finds in a folder above its own (SkyDiscover's benchmarks/gpu_mode/<task>/evaluator.py puts
// its parent folder on sys.path and imports ../shared_eval.py) is not a module to install: the refusal says where it
// is and to name that folder in python_path, which makes the same folder run unmodified.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { checkTaskNeeds, describeNeeds, taskNeeds } from "../../src/task/needs.ts";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** gpu_mode's shape: parent/shared_eval.py and parent/task/evaluator.py importing it after a sys.path insert. */
function gpuModeShape(): string {
  const root = mkdtempSync(join(tmpdir(), "hone-probe-above-"));
  made.push(root);
  const task = join(root, "task");
  mkdirSync(task);
  writeFileSync(join(root, "shared_eval.py"), "def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
  writeFileSync(
    join(task, "evaluator.py"),
    "import os\nimport sys\n_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n" +
      "if _parent not in sys.path:\n    sys.path.insert(0, _parent)\n\nfrom shared_eval import evaluate\n",
  );
  writeFileSync(join(task, "initial_program.py"), "# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n");
  writeFileSync(join(task, "config.yaml"), "prompt:\n  system_message: a task whose evaluator lives above it\n");
  return task;
}

describe("a module in a folder above the task's", () => {
  it("is said to be there, with python_path as what to do, not an install", () => {
    const task = loadTaskFolder(gpuModeShape());
    expect(describeNeeds(task, taskNeeds(task))[0]).toContain(
      "shared_eval (evaluator.py:7; it is ../shared_eval.py, outside the task folder)",
    );
    let message = "";
    try {
      checkTaskNeeds(task);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('To run it: add ".." to python_path: in the task folder\'s hone.yaml (relative to the task folder');
    expect(message).not.toContain("install shared_eval");
  });

  it("runs once that folder is named in python_path", () => {
    const dir = gpuModeShape();
    writeFileSync(join(dir, "hone.yaml"), 'python_path: [".."]\n');
    const task = loadTaskFolder(dir);
    expect(() => checkTaskNeeds(task)).not.toThrow();
  });

  it("still says to install a module found nowhere", () => {
    const dir = gpuModeShape();
    writeFileSync(
      join(dir, "initial_program.py"),
      "import no_such_module_here\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n",
    );
    writeFileSync(join(dir, "hone.yaml"), 'python_path: [".."]\n');
    expect(() => checkTaskNeeds(loadTaskFolder(dir))).toThrow(/install no_such_module_here for that interpreter/);
  });
});
