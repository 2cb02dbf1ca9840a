// The disk cache of what a task needs (src/task/needs-cache.ts): a hit answers without a scan, and any change to a
// file the scan read or a folder it searched is a miss.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { honeCacheDir } from "../../src/store/cache-dir.ts";

const PAST = new Date(Date.now() - 3600_000);

const seed = (needed: string) => `import ${needed}\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n`;

/** Dates files (and folders) an hour back: a cache entry is kept only for what did not change as the scan ran. */
const age = (...paths: string[]) => {
  for (const p of paths) utimesSync(p, PAST, PAST);
};

/** An OpenEvolve-style folder whose seed imports `needed` (and `extra` files beside it), all dated an hour ago. */
function folder(needed: string, extra: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "hone-needs-cache-"));
  const files: Record<string, string> = {
    "initial_program.py": seed(needed),
    "evaluator.py": "def evaluate(program_path):\n    return {'combined_score': 1.0}\n",
    "config.yaml": "prompt:\n  system_message: a task that needs something\n",
    ...extra,
  };
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  age(...Object.keys(files).map((f) => join(dir, f)), dir);
  return dir;
}

/** needs.ts as a new process has it: nothing held in memory. */
async function fresh() {
  vi.resetModules();
  const [needs, task] = await Promise.all([import("../../src/task/needs.ts"), import("../../src/task/discovery-task.ts")]);
  return { taskNeeds: needs.taskNeeds, taskNeedsAsync: needs.taskNeedsAsync, load: task.loadTaskFolder };
}

const entries = () => {
  try {
    return readdirSync(join(honeCacheDir(), "needs")).map((f) => join(honeCacheDir(), "needs", f));
  } catch {
    return [];
  }
};

describe("the task needs cache", () => {
  let module: string;
  let was: string;
  let cwd: string;
  beforeEach(() => {
    module = `surely_missing_${Math.random().toString(36).slice(2, 10)}`;
    // A quiet working folder of the test's own (the scan searches it): nothing else writes there during a scan.
    was = process.cwd();
    cwd = mkdtempSync(join(tmpdir(), "hone-needs-cwd-"));
    age(cwd);
    process.chdir(cwd);
  });
  afterEach(() => process.chdir(was));

  /** The entry a first scan of `dir` wrote, and its inode (a scan writes it anew, by rename: another inode). */
  async function firstEntry(dir: string) {
    const before = new Set(entries());
    const first = await fresh();
    expect(first.taskNeeds(first.load(dir)).missing).toEqual([]);
    const [entry] = entries().filter((e) => !before.has(e));
    expect(entry).toBeDefined();
    return { entry: entry as string, ino: () => statSync(entry as string).ino };
  }

  it("answers from the disk without a scan while nothing it read changed", async () => {
    const dir = folder("json");
    const { ino } = await firstEntry(dir);
    const kept = ino();
    const next = await fresh();
    expect((await next.taskNeedsAsync(next.load(dir))).missing).toEqual([]);
    expect(ino()).toBe(kept); // read, not written again: no scan ran
  });

  it("never refuses a task from a kept answer: one that names a missing module is checked by a scan", async () => {
    const dir = folder("json");
    const { entry, ino } = await firstEntry(dir);
    const kept = JSON.parse(readFileSync(entry, "utf8"));
    writeFileSync(entry, JSON.stringify({ ...kept, answer: { ...kept.answer, missing: { planted: [["x.py", 1]] } } }));
    const planted = ino();
    const next = await fresh();
    expect(next.taskNeeds(next.load(dir)).missing).toEqual([]);
    expect(ino()).not.toBe(planted); // scanned, and the true answer kept
  });

  it("scans again when a scanned file or a searched folder changed", async () => {
    const helper = `${module}_helper`;
    const dir = folder(helper, { [`${helper}.py`]: "VALUE = 1\n" });
    await firstEntry(dir);
    // The seed now imports a module that is not there: the file changed.
    writeFileSync(join(dir, "initial_program.py"), seed(module));
    age(join(dir, "initial_program.py"));
    const second = await fresh();
    expect(second.taskNeeds(second.load(dir)).missing.map((m) => m.module)).toEqual([module]);
    // Back to the helper, answered from a new entry; then the helper is removed: the folder's time changes.
    writeFileSync(join(dir, "initial_program.py"), seed(helper));
    await new Promise((r) => setTimeout(r, 20));
    const third = await fresh();
    expect(third.taskNeeds(third.load(dir)).missing).toEqual([]);
    rmSync(join(dir, `${helper}.py`));
    const fourth = await fresh();
    expect((await fourth.taskNeedsAsync(fourth.load(dir))).missing.map((m) => m.module)).toEqual([helper]);
  });

  it("scans again when a module in the working folder, where `python -c` finds it too, is gone", async () => {
    const dir = folder(module);
    writeFileSync(join(cwd, `${module}.py`), "VALUE = 1\n");
    age(join(cwd, `${module}.py`), cwd);
    await firstEntry(dir);
    rmSync(join(cwd, `${module}.py`));
    const next = await fresh();
    expect(next.taskNeeds(next.load(dir)).missing.map((m) => m.module)).toEqual([module]);
  });

  it("stamps a path entry that cannot be looked at (a file taken for a folder) instead of failing", async () => {
    const dir = folder("json", { "hone.yaml": "python_path: [initial_program.py/sub]\n" });
    const { ino } = await firstEntry(dir);
    const kept = ino();
    const next = await fresh();
    expect(next.taskNeeds(next.load(dir)).missing).toEqual([]);
    expect(ino()).toBe(kept);
  });

  it("scans again when an entry is not one it wrote", async () => {
    const dir = folder("json");
    const { entry } = await firstEntry(dir);
    const kept = JSON.parse(readFileSync(entry, "utf8"));
    for (const missing of [{ planted: "x" }, { planted: [[1, "a"]] }, ["planted"]]) {
      writeFileSync(entry, JSON.stringify({ ...kept, answer: { ...kept.answer, missing } }));
      const next = await fresh();
      expect(next.taskNeeds(next.load(dir)).missing).toEqual([]);
    }
    writeFileSync(entry, "{ not json");
    const next = await fresh();
    expect(next.taskNeeds(next.load(dir)).missing).toEqual([]);
  });

  it("keeps no answer when what it read changed as the scan ran", async () => {
    const dir = folder("json");
    utimesSync(join(dir, "initial_program.py"), new Date(), new Date()); // written just now: maybe during the scan
    const before = new Set(entries());
    const first = await fresh();
    expect(first.taskNeeds(first.load(dir)).missing).toEqual([]);
    expect(entries().filter((e) => !before.has(e))).toEqual([]);
  });
});
