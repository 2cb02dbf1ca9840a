import { execFileSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { EvaluatorPool } from "../../src/task/evaluator-pool.ts";
import { PYTHON_DIR } from "../../src/task/python-env.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// An evaluator or a program is imported as Python imports a module: registered in sys.modules while its code runs,
// so a @dataclass under `from __future__ import annotations` (which looks its module up) loads. The program's entry is
// removed after its call, so the zygote's rehearsal leaves nothing registered.

const SHAPES = join(ROOT, "test", "fixtures", "task-shapes");
const DATACLASS = join(SHAPES, "dataclass-evaluator");
const SEED = readFileSync(join(DATACLASS, "initial_program.py"), "utf8");

async function warm(dir: string): Promise<unknown> {
  const pool = await EvaluatorPool.start(loadTaskFolder(dir), { size: 1 });
  try {
    return await pool.evaluate(SEED);
  } finally {
    pool.close();
  }
}

describe("a @dataclass under `from __future__ import annotations`", () => {
  it("loads in the evaluator and in the program, cold", async () => {
    const e = await evaluateProgram(loadTaskFolder(DATACLASS), SEED);
    expect(e.reason).toBeUndefined();
    expect(e).toMatchObject({ valid: true, score: 2.5 });
  });

  it("loads in a warm pool's forked evaluator", async () => {
    expect(await warm(DATACLASS)).toMatchObject({ valid: true, score: 2.5 });
  });

  it("loads in a kept evaluator (loaded once, evaluations in its own process)", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    const dir = join(tempDir(), "kept");
    cpSync(DATACLASS, dir, { recursive: true });
    writeFileSync(join(dir, "hone.yaml"), "evaluator_state: kept\n");
    expect(await warm(dir)).toMatchObject({ valid: true, score: 2.5 });
  });
});

/** Runs Python with hone's modules importable; prints what `code` prints. */
const python = (code: string, cwd: string) =>
  execFileSync("python3", ["-c", `import sys; sys.path.insert(0, ${JSON.stringify(PYTHON_DIR)})\n${code}`], {
    cwd,
    encoding: "utf8",
  });

describe("the program child", () => {
  it("runs a program with a dataclass and leaves its module unregistered after the call", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "p.py"), SEED);
    const out = python(
      "import hone_program_child as c\nprint(c.run_entry('p.py', 'run', []))\nprint(c.PROGRAM_MODULE in sys.modules)",
      dir,
    );
    expect(out.trim().split("\n")).toEqual(['{"ok": true, "value": 2.5}', "False"]);
  });

  it("rehearses without leaving the program's module registered", () => {
    const out = python("import hone_program_child as c\nc.rehearse()\nprint('candidate_program' in sys.modules)", tempDir());
    expect(out.trim()).toBe("False");
  });
});

describe("an evaluator that fails to load", () => {
  it("is said to have failed to load, not to have evaluated the program", async () => {
    const dir = join(SHAPES, "evaluator-fails-to-load");
    const e = await evaluateProgram(loadTaskFolder(dir), readFileSync(join(dir, "initial_program.py"), "utf8"));
    expect(e).toMatchObject({ valid: false, evaluatorFailed: true });
    expect(e.reason).toBe("the evaluator failed to load: RuntimeError: the evaluator's own setup failed");
  });
});
