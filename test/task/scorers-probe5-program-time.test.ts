import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_TASKS_DIR, builtinTaskIds } from "../../src/task/builtin.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";

// How long each built-in evaluator lets the program run: the evaluator is imported with its run_program (or
// run_program_many, its own or hone_checks') replaced by a stand-in that records the timeout it is given and fails the call.
const PYTHON_DIR = join(BUILTIN_TASKS_DIR, "..", "src", "task", "python");
const SCRIPT = `
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
import hone_runtime
spec = importlib.util.spec_from_file_location("evaluator_under_test", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
seen = []
def record(*args, timeout=None, **kwargs):
    seen.append(timeout)
    raise hone_runtime.ProgramError("recorded")
for target in (module, sys.modules.get("hone_checks")):
    for name in ("run_program", "run_program_many"):
        if hasattr(target, name):
            setattr(target, name, record)
module.evaluate("/nonexistent/program.py")
print(json.dumps(seen))
`;

function programSeconds(id: string): number[] {
  const out = execFileSync("python3", ["-c", SCRIPT, PYTHON_DIR, join(BUILTIN_TASKS_DIR, id, "evaluator.py")], {
    encoding: "utf8",
  });
  return JSON.parse(out) as number[];
}

describe("built-in tasks: the program's own time limit", () => {
  // SimpleTES gives run_code() 350 s on this task (its evaluator's TIMEOUT_SECONDS and its prompt), and its record
  // program plans 340 s of search; hone's evaluator killed the program at 300 s, so that very program was invalid here.
  it("hadamard-29 gives run_code() SimpleTES's 350 s", () => {
    expect(programSeconds("hadamard-29")).toEqual([350]);
  });
  it.each(builtinTaskIds())("%s runs its program within the task's evaluation timeout", (id) => {
    const task = loadTaskFolder(join(BUILTIN_TASKS_DIR, id), { id });
    const limits = programSeconds(id);
    expect(limits.length).toBeGreaterThan(0);
    for (const limit of limits) expect(limit).toBeLessThan(task.timeoutSec);
  });
});
