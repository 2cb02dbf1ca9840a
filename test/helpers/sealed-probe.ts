// What the sealed-probe tests share: an evaluator that reports what a program's run() returned (as metrics.seen),
// and that evaluator's task evaluated warm (a pool of one) and cold, set up around the describe block that asks.
import { afterAll, beforeAll } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { makeTask } from "./fixtures.ts";

export const ENOSYS = 38;
/** The architectures hone_sandbox.py's seccomp filter knows (others get no filter, as src/task/README.md says). */
export const FILTERED = process.arch === "x64" || process.arch === "arm64";
/** What the program's run() returned. */
export const seen = (e: Evaluation) => JSON.parse(String(e.metrics.seen));

/** An evaluator that runs the program's run() sealed under `memoryMb` and scores 1 with what it returned. */
export const seenEvaluator = (memoryMb: number) => `import json
from hone_runtime import run_program, ProgramError
def evaluate(program_path):
    try:
        out = run_program(program_path, 'run', timeout=30, memory_mb=${memoryMb})
    except ProgramError as e:
        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}
    return {'combined_score': 1.0, 'validity': 1.0, 'seen': json.dumps(out)}
`;

/** Call inside a describe block: evaluates a program with seenEvaluator's task, "warm" (its pool) or "cold". */
export function warmAndCold(memoryMb: number): (mode: string, program: string) => Promise<Evaluation> {
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  beforeAll(async () => {
    task = loadTaskFolder(makeTask(seenEvaluator(memoryMb), { timeout: 40 }));
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => pool?.close());
  return (mode, program) => (mode === "warm" ? pool.evaluate(program) : evaluateProgram(task, program));
}
