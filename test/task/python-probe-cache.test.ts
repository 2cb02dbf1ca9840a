// The interpreter probe kept on disk: an entry answers at once while a fresh probe confirms it; an interpreter that
// changed behind the same name (a pyenv-like shim switched to another Python) is refused loudly and the entry corrected.
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { tempDir } from "../helpers/fixtures.ts";

type PythonEnv = typeof import("../../src/task/python-env.ts");
type ProbeCache = typeof import("../../src/task/python-probe-cache.ts");

/** A fresh copy of the modules, as a new hone process would load them (nothing probed in memory yet). */
async function fresh(): Promise<PythonEnv & ProbeCache> {
  vi.resetModules();
  return { ...(await import("../../src/task/python-env.ts")), ...(await import("../../src/task/python-probe-cache.ts")) };
}

let dir: string;
let shim: string;
let target: string;
const saved = process.env.HONE_CACHE_DIR;

beforeEach(async () => {
  dir = tempDir();
  process.env.HONE_CACHE_DIR = join(dir, "cache");
  // A shim as pyenv's: one path whose file never changes, running whichever interpreter `target` names.
  target = join(dir, "target");
  shim = join(dir, "bin", "py");
  mkdirSync(join(dir, "bin"));
  writeFileSync(shim, `#!/bin/sh\nexec "$(cat '${target}')" "$@"\n`);
  chmodSync(shim, 0o755);
  const real = (await fresh()).pythonInfo("python3").executable;
  writeFileSync(target, real);
});

afterEach(() => {
  if (saved === undefined) delete process.env.HONE_CACHE_DIR;
  else process.env.HONE_CACHE_DIR = saved;
});

describe("the interpreter probe cache", () => {
  it("keeps a probe on disk, and a new process answers from it once a fresh probe agrees", async () => {
    const first = await fresh();
    const info = first.pythonInfo(shim);
    const entry = JSON.parse(readFileSync(first.probeCacheFile(shim), "utf8"));
    expect(entry.probe.executable).toBe(info.executable);
    expect(first.readCachedProbe(shim)?.executable).toBe(info.executable);
    const next = await fresh();
    const checked = next.primePython(shim);
    expect(next.pythonInfo(shim)).toEqual(info);
    await expect(checked).resolves.toBeUndefined();
  });

  it("refuses an entry once its interpreter changed behind the same name, and corrects the entry", async () => {
    const before = (await fresh()).pythonInfo(shim).executable;
    const other = join(dir, "other", "python3");
    mkdirSync(join(dir, "other"));
    symlinkSync(before, other);
    writeFileSync(target, other);
    const next = await fresh();
    const checked = next.primePython(shim);
    expect(next.pythonInfo(shim).executable).toBe(before);
    await expect(checked).rejects.toThrow(/no longer the interpreter hone probed before .* it is now .*other\/python3/);
    expect(next.pythonInfo(shim).executable).toBe(other);
    expect(next.readCachedProbe(shim)?.executable).toBe(other);
    const after = await fresh();
    const again = after.primePython(shim);
    expect(after.pythonInfo(shim).executable).toBe(other);
    await expect(again).resolves.toBeUndefined();
  });

  it("ignores an entry whose interpreter file is no longer the one probed, or that is not an entry at all", async () => {
    const first = await fresh();
    const info = first.pythonInfo(shim);
    const file = first.probeCacheFile(shim);
    const entry = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...entry, size: entry.size + 1 }));
    expect(first.readCachedProbe(shim)).toBeUndefined();
    for (const junk of ["{", "null", JSON.stringify({ ...entry, probe: { ...entry.probe, executable: "python3" } })]) {
      writeFileSync(file, junk);
      expect(first.readCachedProbe(shim)).toBeUndefined();
    }
    const next = await fresh();
    await expect(next.primePython(shim)).resolves.toBeUndefined();
    expect(next.pythonInfo(shim)).toEqual(info); // probed afresh, and kept again
    expect(next.readCachedProbe(shim)?.executable).toBe(info.executable);
  });

  it("confirms an entry without running a pyenv shim when its version files still select the probed interpreter", async () => {
    // A pyenv stand-in: shims as `pyenv rehash` writes them, and a libexec/pyenv that runs the global version's
    // interpreter and notes each run (a real pyenv is a chain of shells: the cost the fast confirmation avoids).
    const root = join(dir, "pyenv");
    const real = (await fresh()).pythonInfo("python3").executable;
    for (const v of ["3.0.1", "3.0.2"]) {
      mkdirSync(join(root, "versions", v, "bin"), { recursive: true });
      symlinkSync(real, join(root, "versions", v, "bin", "python3"));
    }
    mkdirSync(join(root, "libexec"));
    mkdirSync(join(root, "shims"));
    const log = join(dir, "pyenv-runs");
    writeFileSync(
      join(root, "libexec", "pyenv"),
      `#!/bin/sh\necho run >> '${log}'\nshift\nprogram="$1"; shift\nexec "${root}/versions/$(cat '${root}/version')/bin/$program" "$@"\n`,
    );
    const pyenvShim = join(root, "shims", "python3");
    writeFileSync(
      pyenvShim,
      `#!/usr/bin/env bash\nset -e\n\nprogram="\${0##*/}"\n\nexport PYENV_ROOT="${root}"\nexec "${root}/libexec/pyenv" exec "$program" "$@"\n`,
    );
    chmodSync(join(root, "libexec", "pyenv"), 0o755);
    chmodSync(pyenvShim, 0o755);
    writeFileSync(join(root, "version"), "3.0.1\n");
    const probed = (await fresh()).pythonInfo(pyenvShim);
    expect(probed.executable).toBe(join(root, "versions", "3.0.1", "bin", "python3"));
    const runs = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0);
    expect(runs()).toBe(1);
    const next = await fresh();
    await expect(next.primePython(pyenvShim)).resolves.toBeUndefined();
    expect(next.pythonInfo(pyenvShim)).toEqual(probed);
    expect(runs()).toBe(1); // confirmed from the version file: the shim did not run
    // A folder of the interpreter's changed (a package installed there): probed afresh, which agrees.
    const entryFile = next.probeCacheFile(pyenvShim);
    const entry = JSON.parse(readFileSync(entryFile, "utf8"));
    const [first] = Object.keys(entry.folders);
    writeFileSync(entryFile, JSON.stringify({ ...entry, folders: { ...entry.folders, [first as string]: 1 } }));
    const touched = await fresh();
    await expect(touched.primePython(pyenvShim)).resolves.toBeUndefined();
    expect(touched.knownPythonInfo(pyenvShim)).toBeUndefined(); // the entry is not used
    expect(touched.pythonInfo(pyenvShim)).toEqual(probed);
    expect(runs()).toBe(2);
    await expect((await fresh()).primePython(pyenvShim)).resolves.toBeUndefined();
    expect(runs()).toBe(2); // the entry was made current: the next run reads it again
    writeFileSync(join(root, "version"), "3.0.2\n"); // switched: only running it confirms or refuses
    const after = await fresh();
    await expect(after.primePython(pyenvShim)).rejects.toThrow(/no longer the interpreter hone probed before/);
    expect(runs()).toBe(3);
  });

  it("an entry whose folders changed is probed afresh, never refused, when the name's interpreter cannot be read", async () => {
    // The shim here is a shell script: which interpreter it starts can only be learned by running it.
    const first = await fresh();
    const info = first.pythonInfo(shim);
    // The entry as an older probe left it: other folders, and stamps that no longer hold (a package installed).
    const file = first.probeCacheFile(shim);
    const entry = JSON.parse(readFileSync(file, "utf8"));
    const [root] = Object.keys(entry.folders);
    const stale = { ...entry.probe, roots: [...entry.probe.roots, join(dir, "gone-site-packages")] };
    mkdirSync(join(dir, "gone-site-packages"));
    writeFileSync(file, JSON.stringify({ ...entry, probe: stale, folders: { ...entry.folders, [root as string]: 1 } }));
    const next = await fresh();
    await expect(next.primePython(shim)).resolves.toBeUndefined();
    expect(next.knownPythonInfo(shim)).toBeUndefined(); // the entry was not used
    expect(next.pythonInfo(shim)).toEqual(info); // probed afresh: the folders as they are
    expect(next.readCachedEntry(shim)?.foldersHold).toBe(true); // and kept again
  });

  it("an interpreter that cannot start any more is refused with the usual message", async () => {
    (await fresh()).pythonInfo(shim);
    writeFileSync(target, join(dir, "gone"));
    const next = await fresh();
    await expect(next.primePython(shim)).rejects.toThrow(/cannot start the task's Python interpreter/);
    expect(next.readCachedProbe(shim)).toBeUndefined();
  });
});
