import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { evaluateProgram } from "../../src/task/evaluator.ts";
import { readOnlyHint } from "../../src/task/read-only-hint.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// An evaluator that writes beside its own file (as SimpleTES's compiled-language evaluators build there) meets the
// read-only task folder of its sandbox: the reason says so and what to do, not only "Read-only file system".

const FIXTURE = join(ROOT, "test", "fixtures", "task-shapes", "writes-beside-itself");

describe("an evaluator writing into its read-only task folder", () => {
  it("is told the folder is mounted read-only and where it may write", async (ctx) => {
    requireTool(ctx, "bubblewrap");
    const dir = join(tempDir(), "writes");
    cpSync(FIXTURE, dir, { recursive: true });
    const task = loadTaskFolder(dir);
    const e = await evaluateProgram(task, readFileSync(join(dir, "initial_program.py"), "utf8"));
    expect(e.valid).toBe(false);
    expect(e.reason).toMatch(/Read-only file system: '.*build'; that is in the task folder, which hone mounts read-only/);
    expect(e.reason).toMatch(/may write only in its working directory.*os\.getcwd\(\) or tempfile\.mkdtemp\(\)/);
    expect(existsSync(join(dir, "build"))).toBe(false);
  });

  it("words a read-only path outside the task folder, and nothing for other errors", () => {
    const task = loadTaskFolder(FIXTURE);
    expect(readOnlyHint(task, "OSError: [Errno 30] Read-only file system: '/usr/lib/x'")).toMatch(
      /^the evaluator's sandbox may not write there\. An evaluator may write only/,
    );
    expect(readOnlyHint(task, "ValueError: bad")).toBeUndefined();
  });
});
