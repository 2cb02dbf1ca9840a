import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { makeTask } from "../helpers/fixtures.ts";
import { eventually } from "../helpers/processes.ts";

/** This process's children whose command line holds `mark` (the program zygote's, bubblewrap's or Python's). */
function zygotes(mark = "hone_program_zygote.py"): number {
  let n = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(mark)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

describe("a warm pool whose evaluator fails to load", () => {
  // The evaluator fails at once; the zygote, preloading what the seed imports, is still starting when the pool is
  // closed. It used to become the pool's zygote after the close and keep `hone run` alive until killed.
  it("leaves no program zygote behind once start() has refused it", async () => {
    const dir = makeTask(
      "raise FileNotFoundError('evaluator.py')\n\ndef evaluate(program_path):\n    return {'combined_score': 1.0}\n",
      {
        seed: "import numpy\nimport scipy.optimize\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n",
      },
    );
    const task = loadTaskFolder(dir, { id: "failed-load" });
    for (let i = 0; i < 3; i++) {
      await expect(EvaluatorPool.start(task, { size: 1 })).rejects.toThrow(/failed to load/);
      expect(await eventually(() => zygotes() === 0, 30_000)).toBe(true);
    }
  }, 150_000);

  // The race made certain: a zygote that never says it is ready (it would be killed only at the start timeout, a
  // minute, keeping `hone run` alive that long) is killed as the pool closes.
  it("kills a program zygote still starting when the pool closes", async () => {
    const dir = makeTask(
      "raise FileNotFoundError('evaluator.py')\n\ndef evaluate(program_path):\n    return {'combined_score': 1.0}\n",
    );
    const task = loadTaskFolder(dir, { id: "failed-load-slow-zygote" });
    const command = vi
      .spyOn(EvaluatorPool.prototype as unknown as { zygoteCommand(): [string, string[]] }, "zygoteCommand")
      .mockReturnValue(["sleep", ["4321"]]);
    try {
      await expect(EvaluatorPool.start(task, { size: 1, startTimeoutMs: 120_000 })).rejects.toThrow(/failed to load/);
      expect(await eventually(() => zygotes("4321") === 0, 10_000)).toBe(true);
    } finally {
      command.mockRestore();
    }
  }, 60_000);
});
