// The warm pool where bubblewrap is not available (HONE_NO_BWRAP=1, read once per process): an evaluation runs in a
// process group of its own, not a namespace, and the pool waits for that group's end before the next evaluation.
process.env.HONE_NO_BWRAP = "1";

import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { isolationSupport } from "../../src/task/python-env.ts";
import { PY_DAEMON, survivors } from "../helpers/attacks.ts";
import { makeTask } from "../helpers/fixtures.ts";
import { withPool } from "../helpers/pool.ts";
import { leftoverCases } from "../helpers/pool-leftovers.ts";

describe("warm evaluator pool without bubblewrap", () => {
  it("is really the fallback", () => expect(isolationSupport().bwrap).toBe(false));

  leftoverCases();

  it("keeps serving, without waiting for it, when an evaluation leaves a daemon (a stated gap without bubblewrap)", async () => {
    // The daemon left the evaluation's session, so its process group's kill misses it, and it becomes the pool's
    // child (the pool is the subreaper of what evaluations start): the pool must not wait for that child.
    const t = loadTaskFolder(
      makeTask(
        `import os\n${PY_DAEMON}\ndef evaluate(program_path):\n    _hone_daemon()\n    os.wait()\n    return {'combined_score': 1.0}\n`,
      ),
    );
    try {
      await withPool(t, async (pool) => {
        for (let i = 0; i < 3; i++) {
          const e = await pool.evaluate(t.seedProgram);
          expect(e).toMatchObject({ valid: true, score: 1 });
          expect(e.seconds).toBeLessThan(1.5);
        }
      });
      await expect.poll(() => survivors().length).toBe(3); // each evaluation waited for its daemon to leave
    } finally {
      for (const pid of survivors()) process.kill(pid, "SIGKILL");
    }
  });
});
