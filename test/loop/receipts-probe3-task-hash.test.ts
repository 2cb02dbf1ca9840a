import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contentHash } from "../../src/harness/files.ts";
import { taskContentHash } from "../../src/task/content-hash.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { loadEntry, readRegistry } from "../../src/task/registry.ts";
import { makeTask, tempDir, write } from "../helpers/fixtures.ts";

// A task's content hash keys its recorded evaluations (a replay refuses a task whose hash changed) and is its
// measurement identity's task content. Before: only the task folder's regular files were hashed, so whatever else
// the evaluator reads could change a score with the identity unchanged and a replay none the wiser.

const EVALUATOR = "from helper import SCALE\n\ndef evaluate(program_path):\n    return {'combined_score': SCALE}\n";

describe("a task's content hash", () => {
  it("is the folder's hash as before for a plain folder, so earlier runs still replay", () => {
    const dir = makeTask(EVALUATOR);
    write(join(dir, "data", "points.txt"), "1 2 3\n");
    const task = loadTaskFolder(dir);
    expect(taskContentHash(task)).toBe(contentHash(dir));
  });

  /** A task folder beside a python_path folder `lib` holding helper.py, named relative to it as a user would. */
  const taskWithLib = (helper: string) => {
    const root = tempDir();
    write(join(root, "lib", "helper.py"), helper);
    const made = makeTask(EVALUATOR, { honeYaml: "python_path: [../lib]\n" });
    const dir = join(root, "task");
    cpSync(made, dir, { recursive: true });
    return { dir, lib: join(root, "lib") };
  };

  it("changes when a module on python_path that the evaluator imports changes", () => {
    const { dir, lib } = taskWithLib("SCALE = 1.0\n");
    const before = taskContentHash(loadTaskFolder(dir));
    const folderBefore = contentHash(dir);
    write(join(lib, "helper.py"), "SCALE = 2.0\n");
    expect(taskContentHash(loadTaskFolder(dir))).not.toBe(before);
    // The folder's own files did not change: the folder's hash alone could not see it.
    expect(contentHash(dir)).toBe(folderBefore);
  });

  it("does not depend on where the task and its python_path folder are, only on what they hold", () => {
    const [a, b] = [taskWithLib("SCALE = 1.0\n"), taskWithLib("SCALE = 1.0\n")];
    expect(a.dir).not.toBe(b.dir);
    expect(taskContentHash(loadTaskFolder(a.dir))).toBe(taskContentHash(loadTaskFolder(b.dir)));
  });

  it("changes when a data file the folder links to changes (a linked file, a linked folder)", () => {
    const outside = tempDir("hone-data-");
    write(join(outside, "points.txt"), "1 2 3\n");
    write(join(outside, "set", "more.txt"), "4 5 6\n");
    const dir = makeTask(EVALUATOR.replace("from helper import SCALE\n", "SCALE = 1.0\n"));
    symlinkSync(join(outside, "points.txt"), join(dir, "points.txt"));
    symlinkSync(join(outside, "set"), join(dir, "set"));
    const task = loadTaskFolder(dir);
    const first = taskContentHash(task);
    writeFileSync(join(outside, "points.txt"), "9 9 9\n");
    const second = taskContentHash(task);
    expect(second).not.toBe(first);
    writeFileSync(join(outside, "set", "more.txt"), "7 7 7\n");
    expect(taskContentHash(task)).not.toBe(second);
  });

  it("ends on a link cycle and counts a dangling link by where it points", () => {
    const dir = makeTask(EVALUATOR.replace("from helper import SCALE\n", "SCALE = 1.0\n"));
    mkdirSync(join(dir, "sub"));
    symlinkSync("..", join(dir, "sub", "up"));
    symlinkSync("nowhere-a", join(dir, "dangling"));
    // The kernel's files are never read (a link to /proc would read /proc/kcore).
    symlinkSync("/proc", join(dir, "kernel"));
    symlinkSync("/dev/zero", join(dir, "zeros"));
    const task = loadTaskFolder(dir);
    const a = taskContentHash(task);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    const other = makeTask(EVALUATOR.replace("from helper import SCALE\n", "SCALE = 1.0\n"));
    mkdirSync(join(other, "sub"));
    symlinkSync("..", join(other, "sub", "up"));
    symlinkSync("nowhere-b", join(other, "dangling"));
    symlinkSync("/proc", join(other, "kernel"));
    symlinkSync("/dev/zero", join(other, "zeros"));
    expect(taskContentHash(loadTaskFolder(other))).not.toBe(a);
  });

  it("changes with what a tasks.yaml entry overrides (env, timeout), not with its budget", () => {
    const root = tempDir();
    const dir = join(root, "t");
    const made = makeTask(EVALUATOR.replace("from helper import SCALE\n", "SCALE = 1.0\n"));
    mkdirSync(dir);
    for (const f of ["initial_program.py", "evaluator.py", "config.yaml"])
      writeFileSync(join(dir, f), readFileSync(join(made, f)));
    const hashWith = (entry: string) => {
      writeFileSync(join(root, "tasks.yaml"), `tasks:\n  - id: t1\n    path: t\n${entry}`);
      const e = readRegistry(root).find((x) => x.id === "t1");
      if (!e) throw new Error("no entry");
      return taskContentHash(loadEntry(e));
    };
    const plain = hashWith("");
    expect(plain).toBe(contentHash(dir));
    const env = hashWith("    env:\n      NOISE: seeded\n");
    expect(env).not.toBe(plain);
    expect(hashWith("    env:\n      NOISE: unseeded\n")).not.toBe(env);
    expect(hashWith("    timeout: 7\n")).not.toBe(plain);
    expect(hashWith("    max_evals: 7\n")).toBe(plain);
  });
});
