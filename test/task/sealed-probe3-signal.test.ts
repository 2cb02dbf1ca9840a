// Third attacker's probe (issue 12): an evaluator killed by a signal (a program run in its own process that
// crashes it, say) is reported the same warm and cold. The warm pool called every signal but SIGKILL by its number
// ("was killed by SIG11"), a name no one looks up, where the cold path says SIGSEGV.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram, signalName } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { makeTask } from "../helpers/fixtures.ts";

const EVALUATOR = `import os, signal
def evaluate(program_path):
    name = open(program_path).read().strip()
    os.kill(os.getpid(), getattr(signal, name))
    return {'combined_score': 1.0}
`;

describe("an evaluator killed by a signal", () => {
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  beforeAll(async () => {
    task = loadTaskFolder(makeTask(EVALUATOR, { timeout: 30 }));
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => pool?.close());

  it.each(["SIGSEGV", "SIGABRT", "SIGTERM", "SIGKILL"])("is reported by the signal's name, warm as cold (%s)", async (name) => {
    const warm = await pool.evaluate(name);
    const cold = await evaluateProgram(task, name);
    expect(warm.valid).toBe(false);
    expect(warm.reason).toMatch(new RegExp(`^the evaluator was killed by ${name} without a result`));
    expect(cold.reason).toMatch(new RegExp(`^the evaluator was killed by ${name} without a result`));
  });

  it("names numbers without a name as SIG<n>", () => {
    expect(signalName(11)).toBe("SIGSEGV");
    expect(signalName(6)).toBe("SIGABRT");
    expect(signalName(250)).toBe("SIG250");
  });
});
