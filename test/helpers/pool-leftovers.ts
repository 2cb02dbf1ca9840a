import { existsSync } from "node:fs";
import { expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { PY_HEAVY_LEFTOVER, SURVIVOR_MARK, survivors } from "./attacks.ts";
import { makeTask } from "./fixtures.ts";
import { withPool } from "./pool.ts";

/** An evaluator that runs `leave` (Python, indented for its body) for a program marked LEAVE, then scores 1. */
export const leaving = (leave: string, prelude = "") =>
  loadTaskFolder(
    makeTask(
      `import os, subprocess, time\n${prelude}\ndef evaluate(program_path):\n    if 'LEAVE' in open(program_path).read():\n${leave}\n    return {'combined_score': 1.0}\n`,
      { timeout: 30 },
    ),
  );

/** SIGKILL to the processes still running `sleep SURVIVOR_MARK`, those that end meanwhile aside. */
export function killSurvivors(): void {
  for (const pid of survivors()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * The warm pool's cases about what an evaluation leaves running, for the pool this machine gives (in a sandbox of its
 * own with bubblewrap) and for the one without it (test/task/pool-nobwrap.test.ts).
 */
export function leftoverCases(): void {
  it("answers an evaluator whose leftovers hold its pipes at once, and kills them before the next evaluation", async () => {
    // One leftover holds stdout and stderr (subprocess), one the result pipe too (a bare fork): the pool answers
    // when the result is whole, not when they let go, and kills them after answering.
    const t = leaving(
      `        subprocess.Popen(['sleep', '${SURVIVOR_MARK}'])\n        if os.fork() == 0:\n            os.execv('/bin/sleep', ['sleep', '${SURVIVOR_MARK}'])`,
    );
    await withPool(t, async (pool) => {
      const left = await pool.evaluate(t.seedProgram.replace("X = 1.0", "X = 1.0  # LEAVE"));
      expect(left).toMatchObject({ valid: true, score: 1 });
      expect(left.seconds).toBeLessThan(15);
      expect(await pool.evaluate(t.seedProgram)).toMatchObject({ valid: true, score: 1 });
      expect(survivors()).toEqual([]);
    });
  });

  it("has what an evaluation left ended and reaped before it serves the next one", async () => {
    // The leftover has written to 512 MB: once killed, the kernel takes tens of ms to tear it down, longer than the
    // next evaluation takes. Its pid must be free (not dying, not a zombie) when that evaluation is answered.
    const t = leaving("        _hone_heavy_leftover()\n        time.sleep(1.5)", PY_HEAVY_LEFTOVER);
    const seen = new Set<number>();
    const watch = setInterval(() => {
      for (const pid of survivors()) seen.add(pid);
    }, 20);
    await withPool(t, async (pool) => {
      try {
        expect(await pool.evaluate(t.seedProgram.replace("X = 1.0", "X = 1.0  # LEAVE"))).toMatchObject({ valid: true });
      } finally {
        clearInterval(watch);
      }
      expect(seen.size).toBe(1);
      const next = await pool.evaluate(t.seedProgram);
      expect(next).toMatchObject({ valid: true, score: 1 });
      expect(next.seconds).toBeLessThan(2); // the wait ended when the leftover was gone, not at its 5 s cap
      expect([...seen].filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
    });
  });
}
