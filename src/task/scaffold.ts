import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError } from "../errors.ts";

const SEED = `"""A new discovery task: improve solve() so that the evaluator's score rises."""


# EVOLVE-BLOCK-START
def solve():
    """Return a list of numbers; the evaluator rewards a sum close to 10 with few numbers."""
    return [1.0, 2.0, 3.0]
# EVOLVE-BLOCK-END


def run():
    """Entry point called (in its own isolated process) by the evaluator."""
    return solve()
`;

const EVALUATOR = `"""Evaluator for {{id}}: runs the program in an isolated process and scores only what it recomputes here."""
import math

from hone_runtime import ProgramError, run_program


def invalid(reason):
    return {"combined_score": 0.0, "validity": 0.0, "error": str(reason)[:500]}


def evaluate(program_path):
    try:
        values = run_program(program_path, "run", timeout=30)
    except ProgramError as exc:
        return invalid(exc)
    # Check shapes, types and finiteness before computing anything from the output.
    if not isinstance(values, list) or not values or len(values) > 1000:
        return invalid("run() must return a non-empty list of at most 1000 numbers")
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) for v in values):
        return invalid("every value must be a finite number")
    score = 1.0 / (1.0 + abs(sum(values) - 10.0)) - 0.001 * len(values)
    return {"combined_score": score, "validity": 1.0}
`;

/** `hone tasks new`: a task folder with a seed program, an evaluator using hone_runtime, config.yaml and hone.yaml. */
export function scaffoldTask(dirArg: string): string {
  const dir = resolve(dirArg);
  if (existsSync(dir)) throw new HoneError("usage", `${dir} already exists; choose a new folder name`);
  const id = dir.split("/").pop() ?? "my-task";
  if (!/^[a-z0-9][a-z0-9-]{1,63}$/.test(id))
    throw new HoneError("usage", `"${id}" is not a task id: use 2-64 lowercase letters, digits and hyphens`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "initial_program.py"), SEED);
  writeFileSync(join(dir, "evaluator.py"), EVALUATOR.replace("{{id}}", id));
  writeFileSync(
    join(dir, "config.yaml"),
    `prompt:\n  system_message: |\n    Describe the problem here: what the program returns, what the evaluator checks and what a higher\n    combined_score means.\nevaluator:\n  timeout: 60\n`,
  );
  writeFileSync(
    join(dir, "hone.yaml"),
    `id: ${id}\nmetric: combined_score\ndirection: maximize\nbudget:\n  max_evals: 20\n# The evaluator keeps no state between calls and runs the program only through hone_runtime, so one process\n# serves every evaluation; remove this if it keeps state (a fresh copy per evaluation is the default).\nevaluator_state: kept\n# reference:\n#   value: 1.0\n#   source: where the best known value comes from\n# secrets: [strings a harness may never contain]\n`,
  );
  return dir;
}
