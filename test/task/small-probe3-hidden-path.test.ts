import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { judgeExit } from "../../src/task/evaluator.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// The hint that a path exists beside the task folder goes back to the model in the evaluation's reason: a program
// that makes the evaluator name a path (by raising, or through a metric's text) must learn nothing about the machine.

const family = (evaluator: string) => {
  const root = tempDir("hone-hint-");
  write(join(root, "cache", "inputs", "0000.txt"), "1\n");
  write(join(root, ".ssh", "id_rsa"), "secret\n");
  write(join(root, "sibling-task", "answers.txt"), "42\n");
  const dir = join(root, "tasks", "ahc039");
  write(join(dir, "init_program.py"), "# EVOLVE-BLOCK-START\nx = 1\n# EVOLVE-BLOCK-END\n");
  write(join(dir, "evaluator.py"), evaluator);
  write(join(dir, "ahc039.txt"), "an AtCoder task\n");
  write(join(root, "tasks", "other", "hidden.txt"), "h\n");
  return { root, task: loadTaskFolder(dir) };
};
const exit = (result: unknown, code = 0) => ({
  code,
  signal: null,
  timedOut: false,
  result: JSON.stringify(result),
  stdout: "",
  stderr: "",
  seconds: 0.1,
});
const USES_CACHE =
  'from pathlib import Path\nCACHE = Path(__file__).parent.parent.parent / "cache"\n\ndef evaluate(p):\n    return {"combined_score": 0.0}\n';

describe("the hidden-path hint names only paths the task's own files name", () => {
  it("says nothing of a path only the program named, in a raise or in a metric's text", () => {
    const { root, task } = family(USES_CACHE);
    for (const path of [join(root, ".ssh", "id_rsa"), join(root, "sibling-task", "answers.txt"), join(root, "tasks", "other")]) {
      const raised = judgeExit(task, exit({ error: `ValueError: ${path}` }, 1), 30);
      expect(raised.reason).not.toContain("exists on this machine");
      const metric = judgeExit(task, exit({ metrics: { validity: 0, error: `not found: ${path}` } }), 30);
      expect(metric.valid).toBe(false);
      expect(metric.reason).not.toContain("exists on this machine");
    }
  });

  it("still says it for the folder the evaluator reaches, and not when the evaluator does not name it", () => {
    const { root, task } = family(USES_CACHE);
    const missing = join(root, "cache", "inputs");
    const e = judgeExit(task, exit({ metrics: { validity: 0, error: `Input cache not found: ${missing}` } }), 30);
    expect(e.reason).toContain(`${join(root, "cache")} exists on this machine`);
    expect(e.reason).toContain("add ../../cache to evaluator_read_only");
    // What lies inside the named folder is never looked up: a path there that exists and one that does not get the
    // same hint, so the hint tells a program nothing about the folder's contents.
    const said = (path: string) => {
      const reason = judgeExit(task, exit({ metrics: { validity: 0, error: `not found: ${path}` } }), 30).reason ?? "";
      return reason.slice(reason.indexOf(" exists on this machine"));
    };
    expect(said(join(root, "cache", "inputs"))).toContain("add ../../cache to");
    expect(said(join(root, "cache", "inputs"))).toBe(said(join(root, "cache", "no-such-file")));
    const other = family('def evaluate(p):\n    return {"combined_score": 0.0}  # cached results\n');
    const none = judgeExit(other.task, exit({ metrics: { validity: 0, error: `not found: ${join(other.root, "cache")}` } }), 30);
    expect(none.reason).not.toContain("exists on this machine");
  });
});
