// optimize()'s set-up, whose checks now run beside each other: a task that needs a missing module is still refused
// (exit 4) before anything is created, and a cached interpreter probe that a fresh probe contradicts stops the run
// loudly before round 0, leaving no run folder and the cache corrected.
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";

const saved = process.env.HONE_CACHE_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.HONE_CACHE_DIR;
  else process.env.HONE_CACHE_DIR = saved;
});

function taskFolder(python: string, seedTop = ""): string {
  const dir = tempDir("hone-setup-");
  writeFileSync(join(dir, "initial_program.py"), `${seedTop}# EVOLVE-BLOCK-START\nX = 1.0\n# EVOLVE-BLOCK-END\n`);
  writeFileSync(join(dir, "evaluator.py"), "def evaluate(program_path):\n    return {'combined_score': 1.0}\n");
  writeFileSync(join(dir, "config.yaml"), "prompt:\n  system_message: a small task\n");
  writeFileSync(join(dir, "hone.yaml"), `python: ${python}\n`);
  return dir;
}

async function optimizeIn(task: string, out: string) {
  vi.resetModules(); // a new process: nothing probed in memory
  const { optimize } = await import("../../src/loop/optimize.ts");
  const events: string[] = [];
  const run = optimize(offlineOptimizeSettings({ task, proposals: 1, maxEvals: 2, concurrency: 1, noiseRepeats: 1 }), {
    outDir: out,
    onEvent: (e) => events.push(e.type),
  });
  return { run, events };
}

describe("optimize's set-up", () => {
  it("refuses a task that needs a missing module, with exit 4 (badTask) and nothing created", async () => {
    process.env.HONE_CACHE_DIR = join(tempDir(), "cache");
    const out = join(tempDir(), "run");
    const { run, events } = await optimizeIn(taskFolder("python3", "import surely_missing_mod_b\n"), out);
    await expect(run).rejects.toMatchObject({
      exit: "badTask",
      message: expect.stringMatching(/surely_missing_mod_b \(initial_program.py:1\)/),
    });
    expect(existsSync(out)).toBe(false);
    expect(events).not.toContain("start");
  });

  it("stops before round 0 when the cached probe of its interpreter is contradicted, and corrects the cache", async () => {
    process.env.HONE_CACHE_DIR = join(tempDir(), "cache");
    const dir = tempDir();
    const { pythonInfo } = await import("../../src/task/python-env.ts");
    const real = pythonInfo("python3").executable;
    // A shim (as pyenv's) whose target changes while the shim's own file stays the same.
    mkdirSync(join(dir, "bin"));
    mkdirSync(join(dir, "other"));
    symlinkSync(real, join(dir, "other", "python3"));
    writeFileSync(join(dir, "target"), real);
    const shim = join(dir, "bin", "py");
    writeFileSync(shim, `#!/bin/sh\nexec "$(cat '${join(dir, "target")}')" "$@"\n`, { mode: 0o755 });
    const task = taskFolder(shim);
    vi.resetModules();
    (await import("../../src/task/python-env.ts")).pythonInfo(shim); // cached on disk
    writeFileSync(join(dir, "target"), join(dir, "other", "python3"));
    const out = join(tempDir(), "run");
    const { run, events } = await optimizeIn(task, out);
    await expect(run).rejects.toThrow(/no longer the interpreter hone probed before/);
    expect(events).not.toContain("start");
    expect(existsSync(out)).toBe(false);
    const { readCachedProbe } = await import("../../src/task/python-probe-cache.ts");
    expect(readCachedProbe(shim)?.executable).toBe(join(dir, "other", "python3"));
  });
});
