import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILTIN_TASKS_DIR } from "../../src/task/builtin.ts";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { makeTask, tempDir } from "../helpers/fixtures.ts";
import { withPool } from "../helpers/pool.ts";
import { leftoverCases } from "../helpers/pool-leftovers.ts";
import { eventually } from "../helpers/processes.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

const task = (id: string) => loadTaskFolder(`${BUILTIN_TASKS_DIR}/${id}`, { id });

/** The pool processes this process started that serve evaluations (hone_pool.py), bubblewrap's or Python's. */
function evaluatorProcesses(): number {
  let n = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("hone_pool.py")) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

describe("warm evaluator pool", () => {
  it("is ready with one evaluator and starts the others beside the first evaluation", async () => {
    const t = task("circle-packing");
    const pool = await EvaluatorPool.start(t, { size: 3 });
    try {
      expect(evaluatorProcesses()).toBe(1); // set-up waited for one only, and spawned no other
      expect((await pool.evaluate(t.seedProgram)).valid).toBe(true);
      expect(await eventually(() => evaluatorProcesses() === 3, 30_000)).toBe(true);
    } finally {
      pool.close();
    }
  });

  it("starts the others on its own a little after it is ready, when no evaluation comes", async () => {
    const pool = await EvaluatorPool.start(task("circle-packing"), { size: 3 });
    try {
      expect(await eventually(() => evaluatorProcesses() === 3, 30_000)).toBe(true);
    } finally {
      pool.close();
    }
  });

  it.each(["circle-packing", "autocorrelation-c2", "hadamard-29", "prism", "txn-scheduling"])(
    "gives the same metrics as a cold run, bit for bit (%s)",
    async (id) => {
      const t = task(id);
      const variants = [
        t.seedProgram,
        t.seedProgram.replace(/0\.3\b/, "0.31").replace(/0\.5\b/, "0.52"),
        t.seedProgram.replace("# EVOLVE-BLOCK-END", "raise ValueError('x')\n# EVOLVE-BLOCK-END"),
      ];
      await withPool(t, async (pool) => {
        for (const program of variants) {
          const cold = await evaluateProgram(t, program);
          const warm = await pool.evaluate(program);
          expect(JSON.stringify(warm.metrics)).toBe(JSON.stringify(cold.metrics));
          expect(warm.valid).toBe(cold.valid);
          expect(warm.score).toBe(cold.score);
        }
      });
    },
  );

  it("isolates evaluations: module state changed by one evaluation is not seen by the next", async () => {
    const t = loadTaskFolder(
      makeTask("COUNT = [0]\ndef evaluate(program_path):\n    COUNT[0] += 1\n    return {'combined_score': float(COUNT[0])}\n"),
    );
    await withPool(t, async (pool) => {
      const scores = [];
      for (let i = 0; i < 3; i++) scores.push((await pool.evaluate(t.seedProgram)).score);
      expect(scores).toEqual([1, 1, 1]);
    });
  });

  it("kills a hanging evaluation's process group at the timeout and keeps serving", async () => {
    const t = loadTaskFolder(
      makeTask(
        "import subprocess, time\ndef evaluate(program_path):\n    if 'HANG' in open(program_path).read():\n        subprocess.Popen(['sleep', '300'])\n        time.sleep(300)\n    return {'combined_score': 1.0}\n",
        { timeout: 1.5 },
      ),
    );
    await withPool(t, async (pool) => {
      const hung = await pool.evaluate(t.seedProgram.replace("X = 1.0", "X = 1.0  # HANG"));
      expect(hung).toMatchObject({ valid: false, timedOut: true });
      expect(await pool.evaluate(t.seedProgram)).toMatchObject({ valid: true, score: 1 });
    });
  });

  leftoverCases();

  it("does not wait on a /proc that is not its sandbox's own (a folder bound over it)", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    // There the pool cannot see its namespace empty: reading the host's processes, it waited its 5 s cap each time.
    // hone.yaml cannot ask for it (refused when the task loads, test/task/sandbox-options.test.ts); a task set so can.
    const t = loadTaskFolder(
      makeTask(
        "import os\ndef evaluate(program_path):\n    return {'combined_score': float(os.readlink('/proc/self') == str(os.getpid()))}\n",
      ),
    );
    await withPool({ ...t, evaluatorReadOnly: ["/proc"] }, async (pool) => {
      for (let i = 0; i < 3; i++) {
        const e = await pool.evaluate(t.seedProgram);
        expect(e).toMatchObject({ valid: true, score: 0 }); // the host's /proc, indeed
        expect(e.seconds).toBeLessThan(2);
      }
    });
  });

  it.each([
    ["exits with a code of its own", "os._exit(3)", /exited with code 3 without a result/],
    ["exits with code 0 before hone writes its result", "os._exit(0)", /exited with code 0 without a result/],
    ["is killed", "os.kill(os.getpid(), 9)", /was killed by SIGKILL/],
    // hone's framed result then does not start the pipe: the child's own exit (it waits 10 s for the pool) decides.
    [
      "writes on hone's result pipe itself",
      "os.write(3, b'{\"metrics\": {\"combined_score\": 9}}')\n    return {'combined_score': 1.0}",
      /exited with code 0 without a result/,
    ],
  ])("judges an evaluator that %s by its real exit, never as a result", async (_what, body, reason) => {
    const t = loadTaskFolder(makeTask(`import os\ndef evaluate(program_path):\n    ${body}\n`));
    await withPool(t, async (pool) => {
      expect(await pool.evaluate(t.seedProgram)).toMatchObject({ valid: false, reason: expect.stringMatching(reason) });
    });
  });

  it("is ready with one evaluator, and close() also stops the ones still loading", async () => {
    // The first evaluator to lock its own file loads at once, the others take 10 s: start() must not wait for them
    // (the test's 5 s timeout would stop it), and close() must stop them while they load.
    const t = loadTaskFolder(
      makeTask(
        "import fcntl, time\nLOCK = open(__file__, 'rb')\ntry:\n    fcntl.flock(LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB)\nexcept OSError:\n    time.sleep(10)\ndef evaluate(program_path):\n    return {'combined_score': 1.0}\n",
      ),
    );
    const running = () =>
      readdirSync("/proc").filter((pid) => {
        try {
          return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(t.evaluatorPath);
        } catch {
          return false; // gone meanwhile
        }
      });
    const pool = await EvaluatorPool.start(t, { size: 3 });
    expect(await pool.evaluate(t.seedProgram)).toMatchObject({ valid: true, score: 1 });
    await new Promise((r) => setTimeout(r, 1500)); // the others are in their 10 s by now
    pool.close();
    for (let i = 0; i < 30 && running().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(running()).toEqual([]);
  });

  it("keeps `ahead` program sandboxes made while none runs, and makes them again after a burst", async (ctx) => {
    requireTool(ctx, "bubblewrap", sealedMissing());
    // The seed's text is in the zygote's command line: a mark of this test's own zygote and its calls.
    const mark = `ahead-${process.pid}-${Date.now()}`;
    const t = loadTaskFolder(
      makeTask(
        "from hone_runtime import run_program\ndef evaluate(program_path):\n    return {'combined_score': run_program(program_path, 'run')}\n",
        {
          seed: `# ${mark}\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n\ndef run():\n    return X\n`,
        },
      ),
    );
    /** The calls waiting or running: the zygote's processes one PID namespace deeper than the zygote itself. */
    const calls = () => {
      const depths = readdirSync("/proc").flatMap((pid) => {
        try {
          if (!/^\d+$/.test(pid) || !readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(mark)) return [];
          return [(/NSpid:\s*(.*)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "").split(/\s+/).length];
        } catch {
          return []; // gone meanwhile
        }
      });
      return depths.filter((d) => d === Math.max(...depths)).length;
    };
    const pool = await EvaluatorPool.start(t, { size: 1, ahead: 6 });
    try {
      await expect.poll(calls, { timeout: 20_000 }).toBe(6);
      const burst = await Promise.all(Array.from({ length: 5 }, () => pool.evaluate(t.seedProgram)));
      expect(burst.every((e) => e.valid && e.score === 1)).toBe(true);
      await expect.poll(calls, { timeout: 20_000 }).toBe(6);
    } finally {
      pool.close();
    }
  });

  it("starts for a seed program larger than a command line's argument may be", async () => {
    // The zygote's configuration (with its rehearsal sample of the seed) is one argument: the kernel caps those at
    // 128 KB, beyond which the sandbox would not start at all.
    const seed = `${"# a long header\n".repeat(20_000)}# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n\ndef run():\n    return X\n`;
    expect(seed.length).toBeGreaterThan(256 << 10);
    const t = loadTaskFolder(
      makeTask(
        "from hone_runtime import run_program\ndef evaluate(program_path):\n    return {'combined_score': run_program(program_path, 'run')}\n",
        {
          seed,
        },
      ),
    );
    expect(await withPool(t, (pool) => pool.evaluate(t.seedProgram))).toMatchObject({ valid: true, score: 1 });
  });

  it("reports an evaluator that fails to import with exit-8 semantics", async () => {
    const t = loadTaskFolder(makeTask("import no_such_module_xyz\ndef evaluate(program_path):\n    return {}\n"));
    await expect(EvaluatorPool.start(t, { size: 1 })).rejects.toThrow(/failed to load: ModuleNotFoundError/);
  });
});

describe("evaluated programs are untrusted (cold and warm)", () => {
  let server: ReturnType<typeof createServer>;
  let port = 0;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((s) => {
      connections++;
      s.end("secret");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => server.close());

  /** A task whose evaluator scores whatever the program's run() returns, run in hone_runtime's isolated process. */
  const probeTask = (): DiscoveryTask =>
    loadTaskFolder(
      makeTask(
        "from hone_runtime import run_program, ProgramError\nSTATE = {'secret': 'evaluator-only'}\ndef evaluate(program_path):\n    try:\n        out = run_program(program_path, 'run', timeout=20)\n    except ProgramError as e:\n        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}\n    return {'combined_score': 1.0, 'validity': 1.0, 'seen': str(out)[:300]}\n",
        { seed: "# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\ndef run():\n    return 1\n" },
      ),
    );
  const program = (body: string) => `# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\ndef run():\n${body}\n`;
  const both = (t: DiscoveryTask, p: string) =>
    withPool(t, async (pool) => [await evaluateProgram(t, p), await pool.evaluate(p)]);

  it("sees no API keys or other secrets in its environment", async () => {
    process.env.OPENAI_API_KEY = "sk-must-not-reach-programs";
    try {
      for (const e of await both(
        probeTask(),
        program("    import os\n    return sorted(k for k in os.environ if 'KEY' in k or 'SECRET' in k or 'TOKEN' in k)"),
      )) {
        expect(e.metrics.seen).toBe("[]");
      }
    } finally {
      delete process.env.OPENAI_API_KEY;
    }
  });

  it("cannot reach the evaluator's state (it runs in another process)", async () => {
    for (const e of await both(probeTask(), program("    import sys\n    return [m for m in sys.modules if 'evaluator' in m]")))
      expect(e.metrics.seen).toBe("[]");
  });

  it("has no network, not even loopback", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    const before = connections;
    const p = program(
      `    import socket\n    try:\n        socket.create_connection(('127.0.0.1', ${port}), timeout=2).recv(10)\n        return 'connected'\n    except OSError as e:\n        return 'blocked'`,
    );
    for (const e of await both(probeTask(), p)) expect(e.metrics.seen).toBe("blocked");
    expect(connections).toBe(before);
  });

  it("cannot write outside its scratch directory", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    const target = `${tempDir()}/escaped.txt`;
    const p = program(
      `    try:\n        open(${JSON.stringify(target)}, 'w').write('x')\n        return 'wrote'\n    except OSError:\n        return 'refused'`,
    );
    for (const e of await both(probeTask(), p)) expect(e.metrics.seen).toBe("refused");
    expect(existsSync(target)).toBe(false);
  });

  it("cannot read the task folder (hidden data, the evaluator)", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    const t = probeTask();
    const p = program(
      `    import os\n    try:\n        return os.listdir(${JSON.stringify(t.dir)})\n    except FileNotFoundError:\n        return 'absent'`,
    );
    for (const e of await both(t, p)) expect(["[]", "absent"]).toContain(e.metrics.seen);
    expect(readFileSync(t.evaluatorPath, "utf8")).toContain("STATE");
  });

  it("is killed at its own timeout, children included", async () => {
    const p = program("    import subprocess, time\n    subprocess.Popen(['sleep', '300'])\n    time.sleep(300)");
    const t = loadTaskFolder(
      makeTask(
        "from hone_runtime import run_program, ProgramError\ndef evaluate(program_path):\n    try:\n        run_program(program_path, 'run', timeout=1)\n    except ProgramError as e:\n        return {'combined_score': 0.0, 'validity': 0.0, 'error': str(e)}\n    return {'combined_score': 1.0}\n",
      ),
    );
    for (const e of await both(t, p)) expect(e.reason).toMatch(/did not return within 1 s/);
  });
});
