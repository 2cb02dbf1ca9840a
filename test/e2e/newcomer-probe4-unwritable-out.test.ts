// A place hone cannot write (a path through a file, a folder under /proc) given as an output folder: a clear refusal
// naming it, exit 2 as the README's table says of an output folder, never "internal error" (1) and never a hang
// (Node's own recursive mkdirSync spins forever under /proc, deaf to Ctrl-C).
import fs, { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installMkdirGuard, makeDirs } from "../../src/cli/mkdir-guard.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

const procfs = existsSync("/proc/self/status");
/** Longer than a refusal takes, far shorter than the test's own limit: a hang is a killed child (code null). */
const LIMIT = 30_000;

function throughAFile(): string {
  const dir = tempDir("hone-nc4-");
  writeFileSync(join(dir, "a-file"), "x");
  return join(dir, "a-file", "out");
}

describe("an output folder that cannot be written", () => {
  it("hone init into a path through a file is exit 2 naming it", async () => {
    const out = throughAFile();
    const r = await hone(["init", out], { timeoutMs: LIMIT });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${out} cannot be written (ENOTDIR`);
    expect(r.stderr).not.toContain("internal error");
  });

  it("hone init on a file (not a folder) is exit 2 naming it", async () => {
    const file = join(tempDir("hone-nc4-"), "a-file");
    writeFileSync(file, "x");
    const r = await hone(["init", file], { timeoutMs: LIMIT });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${file} cannot be written (EEXIST: a file is there, not a folder)`);
  });

  it("hone harness export into a path through a file is exit 2 naming --out, not its hidden build folder", async () => {
    const out = throughAFile();
    const r = await hone(["harness", "export", "harnesses/initial", "--format", "nexau", "--out", out], { timeoutMs: LIMIT });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${out} cannot be written (ENOTDIR)`);
    expect(r.stderr).not.toContain("partial");
  });

  it("hone datasets fetch into a --data-dir through a file is exit 2 naming it", async () => {
    const out = throughAFile();
    const r = await hone(["datasets", "fetch", "gsm8k", "--data-dir", out], { timeoutMs: LIMIT });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${out} cannot be written (ENOTDIR`);
  });

  it.skipIf(!procfs)("hone init under /proc is refused (exit 2), not an endless loop", async () => {
    const r = await hone(["init", "/proc/hone-nc4-no-such"], { timeoutMs: LIMIT });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain("/proc/hone-nc4-no-such cannot be written");
  });

  it.skipIf(!procfs)("hone run --out under /proc is refused naming the folder, not as a race", async () => {
    const out = "/proc/hone-nc4-no-such/run";
    const r = await hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "1", "--out", out], {
      timeoutMs: LIMIT,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${out}: the run's folder cannot be made there (ENOENT)`);
    expect(r.stderr).not.toContain("removed or replaced");
  });
});

describe("makeDirs: mkdir -p as Node's recursive mkdirSync, bounded", () => {
  it("returns the first folder it made, undefined when all were there, and refuses a file", () => {
    const base = tempDir("hone-nc4-mk-");
    expect(makeDirs(join(base, "a", "b", "c"))).toBe(join(base, "a"));
    expect(makeDirs(join(base, "a", "b"))).toBeUndefined();
    writeFileSync(join(base, "f"), "x");
    expect(() => makeDirs(join(base, "f"))).toThrow(/EEXIST/);
    expect(() => makeDirs(join(base, "f", "g"))).toThrow(/ENOTDIR/);
  });

  it.skipIf(!procfs)("ends with ENOENT under /proc, where the parent is there but takes no folder", () => {
    expect(() => makeDirs("/proc/hone-nc4-no-such/x")).toThrow(/ENOENT/);
  });
});

describe("installMkdirGuard: every fs.mkdirSync in the process is the bounded walk", () => {
  const nodeMkdirSync = fs.mkdirSync;
  afterAll(() => {
    // Node's own again, for whatever else runs in this worker.
    fs.mkdirSync = nodeMkdirSync;
    syncBuiltinESMExports();
  });

  it("replaces fs.mkdirSync and the named ESM import, once however often it is called", () => {
    installMkdirGuard();
    const guarded = fs.mkdirSync;
    installMkdirGuard();
    expect(guarded).not.toBe(nodeMkdirSync);
    expect(fs.mkdirSync).toBe(guarded);
    expect(mkdirSync).toBe(guarded);
  });

  it("makes folders as Node's recursive mkdirSync does, and leaves the rest to it", () => {
    installMkdirGuard();
    expect(mkdirSync).not.toBe(nodeMkdirSync);
    const base = tempDir("hone-nc4-guard-");
    expect(mkdirSync(join(base, "a", "b"), { recursive: true })).toBe(join(base, "a"));
    expect(mkdirSync(join(base, "a", "b"), { recursive: true })).toBeUndefined();
    expect(mkdirSync(join(base, "c"))).toBeUndefined();
    expect(existsSync(join(base, "c"))).toBe(true);
    expect(() => mkdirSync(join(base, "c"))).toThrow(/EEXIST/);
  });

  // Asked of the guard only once it is known to be in place: Node's own would never return (a hung worker).
  it.skipIf(!procfs)("a recursive mkdirSync under /proc ends with ENOENT instead of spinning", () => {
    installMkdirGuard();
    expect(mkdirSync).not.toBe(nodeMkdirSync);
    expect(() => mkdirSync("/proc/hone-nc4-no-such/x", { recursive: true })).toThrow(/ENOENT/);
  });
});

describe("hone serve-offline's flags", () => {
  it("a --port or --latency-ms that is not a whole number in range is exit 2 naming it, not a crash", async () => {
    for (const [flag, value] of [
      ["--port", "abc"],
      ["--port", "70000"],
      ["--latency-ms", "-1"],
      ["--latency-ms", "soon"],
    ]) {
      const r = await hone(["serve-offline", flag as string, value as string], { timeoutMs: LIMIT });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`hone: ${flag} ${value}: `);
      expect(r.stderr).not.toContain("internal error");
    }
  });

  it("a port already in use is exit 2 saying so", async () => {
    const busy = createServer();
    await new Promise<void>((ok) => busy.listen(0, "127.0.0.1", ok));
    const { port } = busy.address() as AddressInfo;
    try {
      const r = await hone(["serve-offline", "--port", String(port)], { timeoutMs: LIMIT });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--port ${port}: already in use`);
    } finally {
      busy.close();
    }
  });
});
