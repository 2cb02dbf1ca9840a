// The warm pool where bubblewrap is not available (HONE_NO_BWRAP=1, read once per process): an evaluation runs in a
// process group of its own, not a namespace; the pool is the subreaper of what evaluations start, and waits for that
// group's end before the next evaluation.
process.env.HONE_NO_BWRAP = "1";

import { describe, expect, it } from "vitest";
import { isolationSupport } from "../../src/task/python-env.ts";
import { PY_DAEMON, SURVIVOR_MARK, survivors } from "../helpers/attacks.ts";
import { withPool } from "../helpers/pool.ts";
import { killSurvivors, leaving, leftoverCases } from "../helpers/pool-leftovers.ts";

/** Python: the number of zombies whose parent is the warm pool (the evaluation's parent). */
const POOL_ZOMBIES = `
def pool_zombies():
    n = 0
    for p in os.listdir('/proc'):
        try:
            stat = open('/proc/%s/stat' % p).read()
        except Exception:
            continue
        fields = stat[stat.rindex(')') + 2:].split()
        n += fields[0] == 'Z' and int(fields[1]) == os.getppid()
    return n
`;

describe("warm evaluator pool without bubblewrap", () => {
  it("is really the fallback", () => expect(isolationSupport().bwrap).toBe(false));

  leftoverCases();

  it("keeps serving an evaluator that started a process of its own when it was loaded", async () => {
    // Not an evaluation's leftover: the pool must not wait for it to end before its next evaluation.
    const t = leaving("        pass", `HELPER = subprocess.Popen(['sleep', '${SURVIVOR_MARK}'])`);
    try {
      await withPool(t, async (pool) => {
        for (let i = 0; i < 3; i++) expect(await pool.evaluate(t.seedProgram)).toMatchObject({ valid: true, score: 1 });
      });
    } finally {
      killSurvivors();
    }
  });

  it("keeps serving, without waiting for it, when an evaluation leaves a daemon (a stated gap without bubblewrap)", async () => {
    // The daemon left the evaluation's session, so its process group's kill misses it, and it becomes the pool's
    // child (the pool is the subreaper of what evaluations start): the pool must not wait for that child.
    const t = leaving("        _hone_daemon()\n        os.wait()", PY_DAEMON);
    try {
      await withPool(t, async (pool) => {
        for (let i = 0; i < 3; i++) {
          const e = await pool.evaluate(t.seedProgram.replace("X = 1.0", "X = 1.0  # LEAVE"));
          expect(e).toMatchObject({ valid: true, score: 1 });
          expect(e.seconds).toBeLessThan(1.5);
        }
      });
      await expect.poll(() => survivors().length).toBe(3); // each evaluation waited for its daemon to leave
    } finally {
      killSurvivors();
    }
  });

  it("reaps the orphans an evaluation makes while it runs, so they do not pile up as zombies", async () => {
    // Each `sh` ends before its background child, which the pool, its subreaper, inherits: 200 of them end during
    // the evaluation, and the evaluation counts the pool's zombies 0.8 s after the last.
    const t = leaving(
      "        for _ in range(200):\n            subprocess.Popen(['sh', '-c', 'sleep 0 & exit 0']).wait()\n        time.sleep(0.8)\n        return {'combined_score': float(pool_zombies())}",
      POOL_ZOMBIES,
    );
    await withPool(t, async (pool) => {
      const e = await pool.evaluate(t.seedProgram.replace("X = 1.0", "X = 1.0  # LEAVE"));
      expect(e).toMatchObject({ valid: true });
      expect(e.score).toBeLessThan(5);
    });
  });
});
