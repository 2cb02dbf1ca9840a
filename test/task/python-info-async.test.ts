// Probing the task's interpreter never blocks hone's event loop where it need not: a `hone worker` renews the locks
// of the jobs it holds with timers, and a probe through a shim (pyenv runs a chain of shells) can take seconds on a
// busy machine; past the lock's duration the job goes back to the queue and runs twice.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { contentHash } from "../../src/harness/files.ts";
import { makeTask, tempDir } from "../helpers/fixtures.ts";

let dir: string;
let shim: string;
let log: string;
const saved = process.env.HONE_CACHE_DIR;

beforeEach(() => {
  dir = tempDir();
  process.env.HONE_CACHE_DIR = join(dir, "cache"); // no probe kept from another test
  // An interpreter that takes two seconds to start, as a shim on a busy machine does, and notes each start.
  log = join(dir, "runs");
  shim = join(dir, "slow-python3");
  writeFileSync(shim, `#!/bin/sh\necho run >> '${log}'\nsleep 2\nexec python3 "$@"\n`);
  chmodSync(shim, 0o755);
  vi.resetModules();
});

afterEach(() => {
  if (saved === undefined) delete process.env.HONE_CACHE_DIR;
  else process.env.HONE_CACHE_DIR = saved;
});

const runs = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0);

/** The longest time this process's event loop went without running a timer while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 20);
  try {
    const value = await work();
    stallMs = Math.max(stallMs, performance.now() - last);
    return { value, stallMs };
  } finally {
    clearInterval(tick);
  }
}

describe("probing the interpreter beside", () => {
  it("answers callers at once with one probe, while timers keep running", async () => {
    const env = await import("../../src/task/python-env.ts");
    const { value, stallMs } = await longestStall(() => Promise.all([env.pythonInfoAsync(shim), env.pythonInfoAsync(shim)]));
    expect(stallMs).toBeLessThan(1000);
    expect(runs()).toBe(1);
    expect(value[1]).toBe(value[0]);
    expect(env.pythonInfo(shim)).toBe(value[0]); // from memory: not probed again
    expect(runs()).toBe(1);
    expect(value[0].executable.startsWith("/")).toBe(true);
  });

  it("a pool whose interpreter is not known yet starts without stalling this process", async () => {
    const dirOf = makeTask("def evaluate(program_path):\n    return {'combined_score': 1.0}\n", {
      honeYaml: `python: ${shim}\n`,
    });
    const { loadTaskFolder } = await import("../../src/task/discovery-task.ts");
    const { EvaluatorPool } = await import("../../src/task/evaluator-pool.ts");
    const { value: pool, stallMs } = await longestStall(() => EvaluatorPool.start(loadTaskFolder(dirOf), { size: 1 }));
    try {
      expect(stallMs).toBeLessThan(1000);
      expect(runs()).toBe(1);
      expect((await pool.evaluate("# EVOLVE-BLOCK-START\nX = 2.0\n# EVOLVE-BLOCK-END\n")).score).toBe(1);
    } finally {
      pool.close();
    }
  });

  it("a worker's first job on a task checks it and starts its pool without stalling the worker", async () => {
    const task = makeTask("def evaluate(program_path):\n    return {'combined_score': 1.0}\n", {
      honeYaml: `python: ${shim}\n`,
    });
    const { WorkerCaches } = await import("../../src/loop/distributed/execute.ts");
    const caches = new WorkerCaches(1);
    try {
      const { value, stallMs } = await longestStall(() => caches.task({ ref: task, contentHash: contentHash(task) }, "worker"));
      expect("pool" in value).toBe(true);
      expect(runs()).toBe(1);
      expect(stallMs).toBeLessThan(1000);
    } finally {
      await caches.close();
    }
  });
});
