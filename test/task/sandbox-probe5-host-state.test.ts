import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type DiscoveryTask, loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { runSealed } from "../../src/task/sealed-command.ts";
import { makeTask } from "../helpers/fixtures.ts";
import { requireTool, sealedMissing } from "../helpers/requires.ts";

// As root, bubblewrap's processes are uid 0 of the host's user namespace, and the kernel lets uid 0 write /proc/sys by
// file modes alone (no capability needed): kernel.core_pattern set to "|<command>" from inside a sandbox would run
// that command as root on the host at the next crash. bubblewrap leaves /proc/sys writable under --cap-drop ALL.
// Each probe writes back the value it read (nothing changes when the write is allowed) and reports whether the
// kernel took it. As another user the kernel refuses it anyway, so the expectations hold for both.

const CORE = "/proc/sys/kernel/core_pattern";
const PROBE = `def probe():
    import os
    try:
        with open(${JSON.stringify(CORE)}) as f:
            current = f.read().rstrip("\\n")
        with open(${JSON.stringify(CORE)}, "w") as f:
            f.write(current)
        return "written as uid %d" % os.getuid()
    except OSError as e:
        return "refused: %s" % e.strerror
`;
const PROGRAM = `# EVOLVE-BLOCK-START\nX = 1\n# EVOLVE-BLOCK-END\n${PROBE}`;
// A program that leaves a file in /dev (the sandbox's own tmpfs, writable by its owner) and says whether one was there.
const MARK = "/dev/hone-probe5-mark";
const LEAVER = `# EVOLVE-BLOCK-START\nX = 2\n# EVOLVE-BLOCK-END\ndef probe():
    import os
    seen = os.path.exists(${JSON.stringify(MARK)})
    try:
        with open(${JSON.stringify(MARK)}, "w") as f:
            f.write("left by an earlier evaluation")
        left = "left"
    except OSError as e:
        left = "refused: %s" % e.strerror
    return "seen=%s %s" % (seen, left)
`;
// An evaluator that imports the program into its own process, as many upstream evaluators do: the program then has
// the evaluator's rights inside the evaluator's sandbox, which must still protect the host.
const IMPORTING = `import importlib.util
def evaluate(program_path):
    spec = importlib.util.spec_from_file_location("candidate", program_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {"combined_score": 1.0, "validity": 1.0, "probe": module.probe()}
`;

describe("a sandbox cannot change the host kernel's settings (/proc/sys) or leave files in /dev", () => {
  beforeEach((ctx) => requireTool(ctx, "bubblewrap", sealedMissing()));
  let task: DiscoveryTask;
  let pool: EvaluatorPool;
  const before = readFileSync(CORE, "utf8");
  beforeAll(async () => {
    if (sealedMissing()) return;
    task = loadTaskFolder(makeTask(IMPORTING, { seed: PROGRAM }));
    pool = await EvaluatorPool.start(task, { size: 1 });
  });
  afterAll(() => {
    pool?.close();
    expect(readFileSync(CORE, "utf8")).toBe(before);
  });

  it.each(["warm", "cold"])("[%s] a program imported by its evaluator cannot write kernel.core_pattern", async (mode) => {
    const e = mode === "warm" ? await pool.evaluate(PROGRAM) : await evaluateProgram(task, PROGRAM);
    expect(e).toMatchObject({ valid: true, score: 1 });
    expect(String(e.metrics.probe)).toMatch(/^refused: /);
  });

  it.each(["warm", "cold"])("[%s] a file left in /dev is never seen by the next evaluation", async (mode) => {
    const run = () => (mode === "warm" ? pool.evaluate(LEAVER) : evaluateProgram(task, LEAVER));
    for (let i = 0; i < 2; i++) {
      const e = await run();
      expect(e).toMatchObject({ valid: true, score: 1 });
      expect(String(e.metrics.probe)).toMatch(/^seen=False refused: /);
    }
  });

  it("a harness program run sealed cannot write kernel.core_pattern", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hone-probe5-"));
    try {
      const r = await runSealed({
        argv: ["python3", "-c", `${PROBE}\nprint(probe())`],
        readOnly: [],
        writable: [dir],
        cwd: dir,
        env: {},
        timeoutMs: 30_000,
      });
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toMatch(/^refused: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
