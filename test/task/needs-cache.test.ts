// The disk cache of what a task needs (src/task/needs-cache.ts): a hit answers without a scan, and any change to a
// file the scan read or a folder it searched is a miss.
import { mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { honeCacheDir } from "../../src/store/cache-dir.ts";

const PAST = new Date(Date.now() - 3600_000);

/** An OpenEvolve-style folder whose seed imports `needed`, every file and the folder dated an hour ago. */
function folder(needed: string): string {
  const dir = mkdtempSync(join(tmpdir(), "hone-needs-cache-"));
  writeFileSync(join(dir, "initial_program.py"), `import ${needed}\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n`);
  writeFileSync(join(dir, "evaluator.py"), "def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
  writeFileSync(join(dir, "config.yaml"), "prompt:\n  system_message: a task that needs something\n");
  for (const f of ["initial_program.py", "evaluator.py", "config.yaml", "."]) utimesSync(join(dir, f), PAST, PAST);
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
  beforeEach(() => {
    module = `surely_missing_${Math.random().toString(36).slice(2, 10)}`;
  });

  it("answers from the disk without a scan while nothing it read changed", async () => {
    const dir = folder(module);
    const first = await fresh();
    const before = new Set(entries());
    expect((await first.taskNeedsAsync(first.load(dir))).missing.map((m) => m.module)).toEqual([module]);
    const [entry] = entries().filter((e) => !before.has(e));
    expect(entry).toBeDefined();
    // The entry is what the next process answers from: a planted answer comes back, so no scan ran.
    const kept = JSON.parse(readFileSync(entry as string, "utf8"));
    writeFileSync(entry as string, JSON.stringify({ ...kept, answer: { ...kept.answer, missing: { planted: [] } } }));
    const next = await fresh();
    expect(next.taskNeeds(next.load(dir)).missing.map((m) => m.module)).toEqual(["planted"]);
  });

  it("scans again when a scanned file or a searched folder changed", async () => {
    const dir = folder(module);
    const first = await fresh();
    expect(first.taskNeeds(first.load(dir)).missing.map((m) => m.module)).toEqual([module]);
    // The module appears in a folder on the scan's path (the task folder): the folder's time changes.
    writeFileSync(join(dir, `${module}.py`), "VALUE = 1\n");
    const second = await fresh();
    expect(second.taskNeeds(second.load(dir)).missing).toEqual([]);
    // The seed now imports another missing module: the file changed.
    const other = `${module}_b`;
    writeFileSync(join(dir, "initial_program.py"), `import ${other}\n# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n`);
    const third = await fresh();
    expect((await third.taskNeedsAsync(third.load(dir))).missing.map((m) => m.module)).toEqual([other]);
  });

  it("scans again when the module appears in the working folder, where `python -c` finds it too", async () => {
    const dir = folder(module);
    const cwd = mkdtempSync(join(tmpdir(), "hone-needs-cwd-"));
    utimesSync(cwd, PAST, PAST);
    const was = process.cwd();
    process.chdir(cwd);
    try {
      const first = await fresh();
      expect(first.taskNeeds(first.load(dir)).missing.map((m) => m.module)).toEqual([module]);
      writeFileSync(join(cwd, `${module}.py`), "VALUE = 1\n");
      const second = await fresh();
      expect(second.taskNeeds(second.load(dir)).missing).toEqual([]);
    } finally {
      process.chdir(was);
    }
  });

  it("scans again when an entry is not one it wrote", async () => {
    const dir = folder(module);
    const first = await fresh();
    const before = new Set(entries());
    first.taskNeeds(first.load(dir));
    const [entry] = entries().filter((e) => !before.has(e));
    const kept = JSON.parse(readFileSync(entry as string, "utf8"));
    for (const missing of [{ planted: "x" }, { planted: [[1, "a"]] }, ["planted"]]) {
      writeFileSync(entry as string, JSON.stringify({ ...kept, answer: { ...kept.answer, missing } }));
      const next = await fresh();
      expect(next.taskNeeds(next.load(dir)).missing.map((m) => m.module)).toEqual([module]);
    }
    writeFileSync(entry as string, "{ not json");
    const next = await fresh();
    expect(next.taskNeeds(next.load(dir)).missing.map((m) => m.module)).toEqual([module]);
  });

  it("keeps no answer when what it read changed as the scan ran", async () => {
    const dir = folder(module);
    utimesSync(join(dir, "initial_program.py"), new Date(), new Date()); // written just now: maybe during the scan
    const before = new Set(entries());
    const first = await fresh();
    expect(first.taskNeeds(first.load(dir)).missing.map((m) => m.module)).toEqual([module]);
    expect(entries().filter((e) => !before.has(e))).toEqual([]);
  });
});
