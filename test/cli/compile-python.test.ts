// scripts/compile-python.mjs, which `npm ci` runs: hone's Python modules compiled ahead for the sandboxed processes
// that cannot write beside them, never to be run stale.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const SCRIPT = join(ROOT, "scripts", "compile-python.mjs");
const compile = (dir: string, env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(process.execPath, [SCRIPT, dir], { encoding: "utf8", env });

describe("compile-python", () => {
  it("writes hash-checked bytecode, which Python leaves for a source edited since, even with its size and time kept", () => {
    const dir = tempDir();
    const source = join(dir, "mod.py");
    writeFileSync(source, "VALUE = 1\n");
    compile(dir);
    const [pyc] = readdirSync(join(dir, "__pycache__"));
    expect(pyc).toMatch(/^mod\..+\.pyc$/);
    // PEP 552: the flags word after the magic number, 0b11 for a hash-based pyc that is checked against its source.
    expect(readFileSync(join(dir, "__pycache__", pyc as string)).readUInt32LE(4)).toBe(3);
    // An edit a timestamp check cannot see: the same size and modification time as the compiled source.
    const { atime, mtime } = statSync(source);
    writeFileSync(source, "VALUE = 2\n");
    utimesSync(source, atime, mtime);
    const read = execFileSync("python3", ["-B", "-c", "import mod; print(mod.VALUE)"], {
      encoding: "utf8",
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    expect(read.trim()).toBe("2");
  });

  it("compiles hone's own modules where the sandbox reads them, and every one of them", () => {
    const dir = join(tempDir(), "python");
    mkdirSync(dir);
    for (const f of readdirSync(join(ROOT, "src", "task", "python")).filter((n) => n.endsWith(".py")))
      writeFileSync(join(dir, f), readFileSync(join(ROOT, "src", "task", "python", f)));
    compile(dir);
    const modules = readdirSync(dir).filter((n) => n.endsWith(".py")).length;
    expect(modules).toBeGreaterThan(5);
    expect(readdirSync(join(dir, "__pycache__")).filter((n) => n.endsWith(".pyc"))).toHaveLength(modules);
  });

  it("names a module it cannot compile in one line, compiles the others and exits 0", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "good.py"), "VALUE = 1\n");
    writeFileSync(join(dir, "bad.py"), "def (:\n");
    const out = compile(dir).trim();
    expect(out.split("\n")).toHaveLength(1);
    expect(out).toMatch(/^hone's Python modules were not all compiled ahead \(.*bad\.py.*\); those are compiled when they load$/);
    expect(readdirSync(join(dir, "__pycache__")).map((n) => n.split(".")[0])).toEqual(["good"]);
  });

  it("without python3 says so in one line and exits 0, writing nothing", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "mod.py"), "VALUE = 1\n");
    const out = compile(dir, { PATH: join(dir, "no-such-folder") });
    expect(out.trim()).toBe(
      "hone's Python modules were not all compiled ahead (python3 is not on PATH); those are compiled when they load",
    );
    expect(existsSync(join(dir, "__pycache__"))).toBe(false);
  });
});
