// Which interpreter a `python` setting starts, read without starting it (python-resolve.ts): a path, a command on
// PATH, a pyenv shim read as pyenv reads its version files, and undefined wherever only running it would tell.
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { interpreterFile } from "../../src/task/python-resolve.ts";
import { tempDir } from "../helpers/fixtures.ts";

/** An executable file (its content does not matter: nothing here runs it). */
function exe(file: string, text = "#!/bin/sh\n"): string {
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
}

/** A shim exactly as `pyenv rehash` writes them. */
const pyenvShim = (root: string) =>
  `#!/usr/bin/env bash\nset -e\n[ -n "$PYENV_DEBUG" ] && set -x\n\nprogram="\${0##*/}"\n\nexport PYENV_ROOT="${root}"\nSHIM_PATH=\${0%/*}\nif [[ $SHIM_PATH != "${root}/shims" ]]; then\n  export _PYENV_SHIM_PATH="$SHIM_PATH"\nfi\nexec "${root}/libexec/pyenv" exec "$program" "$@"\n`;

let dir: string;
let root: string;
let env: NodeJS.ProcessEnv;
let work: string;

beforeEach(() => {
  dir = tempDir();
  root = join(dir, "pyenv");
  exe(join(root, "shims", "python3"), pyenvShim(root));
  exe(join(root, "versions", "3.11.7", "bin", "python3"));
  exe(join(root, "versions", "3.12.1", "bin", "python3"));
  env = { PATH: `${join(root, "shims")}:/usr/bin:/bin`, HOME: dir };
  work = join(dir, "project", "sub");
  mkdirSync(work, { recursive: true });
});

describe("the interpreter a python setting starts", () => {
  it("is the file on PATH, or the path given, for a plain interpreter", () => {
    const bin = join(dir, "bin");
    const py = exe(join(bin, "python3"), "\x7fELF");
    expect(interpreterFile("python3", { PATH: `${bin}:/usr/bin` }, work)).toBe(py);
    expect(interpreterFile(py, {}, work)).toBe(py);
    expect(interpreterFile("no-such-python", { PATH: bin }, work)).toBeUndefined();
  });

  it("follows a pyenv shim to the global version, or a .python-version from the working folder up", () => {
    writeFileSync(join(root, "version"), "3.11.7\n");
    expect(interpreterFile("python3", env, work)).toBe(join(root, "versions", "3.11.7", "bin", "python3"));
    writeFileSync(join(dir, "project", ".python-version"), "# pinned\n3.12.1\n");
    expect(interpreterFile("python3", env, work)).toBe(join(root, "versions", "3.12.1", "bin", "python3"));
  });

  it("cannot tell without running it: system, several versions, a version not installed or not a name", () => {
    for (const version of ["system\n", "3.11.7\n3.12.1\n", "3.9.0\n", "../../etc\n"]) {
      writeFileSync(join(root, "version"), version);
      expect(interpreterFile("python3", env, work), version).toBeUndefined();
    }
    writeFileSync(join(root, "version"), "3.11.7\n");
    exe(join(root, "shims", "python3"), pyenvShim(root).replace("exec pyenv", "").replace('"$program"', '"$1"'));
    expect(interpreterFile("python3", env, work)).toBe(join(root, "shims", "python3")); // not pyenv's: itself
  });
});
