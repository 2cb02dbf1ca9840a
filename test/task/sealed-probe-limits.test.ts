import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { makeTask } from "../helpers/fixtures.ts";

// A task whose hone.yaml gives its evaluator less memory than hone_runtime.run_program asks for its program (2048 MB
// by default). On the cold path the program's process is the evaluator's child and inherits the evaluator's hard
// limit, which it cannot raise: asking for more made every call fail before its program ran ("the program's process
// ended without a result"), while the warm pool scored the same program. Both must score it.

const EVALUATOR = `import json
from hone_runtime import run_program, ProgramError
def evaluate(program_path):
    try:
        out = run_program(program_path, 'run', timeout=20)
    except ProgramError as e:
        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}
    return {'combined_score': float(out), 'validity': 1.0}
`;

describe("a task whose memory_mb is below what its evaluator asks for the program", () => {
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  beforeAll(async () => {
    task = loadTaskFolder(makeTask(EVALUATOR, { honeYaml: "memory_mb: 256\n" }));
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => pool?.close());

  const program = "# EVOLVE-BLOCK-START\nX = 7.0\n# EVOLVE-BLOCK-END\ndef run():\n    return X\n";

  it("is scored on the cold path (the program's limit is capped at the evaluator's, not refused)", async () => {
    expect(task.memoryMb).toBe(256);
    const e = await evaluateProgram(task, program);
    expect(e.metrics.error).toBeUndefined();
    expect(e).toMatchObject({ valid: true, score: 7 });
  });

  it("is scored the same on the warm pool", async () => {
    expect(await pool.evaluate(program)).toMatchObject({ valid: true, score: 7 });
  });

  it("still holds the program to the evaluator's limit on the cold path", async () => {
    const hog = "def run():\n    b = bytearray(600 << 20)\n    return len(b)\n";
    const e = await evaluateProgram(task, hog);
    expect(e.valid).toBe(false);
    expect(e.metrics.error).toMatch(/ran out of memory/);
  });
});
