import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { findExecutable, isExecutableFile } from "../which.ts";

// Which interpreter a `python` setting starts, found without starting it: a path, a command on PATH, or a pyenv
// shim read the way pyenv reads its version files. A pyenv shim is a shell script that runs pyenv, which picks the
// version; running it costs a chain of shells (~0.25 s of CPU), the larger part of confirming a cached probe.

const MAX_SHIM_BYTES = 4096;
const MAX_VERSION_BYTES = 4096;

/** The file a command name or path runs, as a shell finds it with this PATH (not followed through links). */
function located(python: string, env: NodeJS.ProcessEnv): string | undefined {
  if (python.includes("/")) return isExecutableFile(resolve(python)) ? resolve(python) : undefined;
  return findExecutable(python, env.PATH ?? "");
}

/** The PYENV_ROOT a pyenv shim exports, when `file` is one (pyenv writes them all alike); else undefined. */
function pyenvRoot(file: string): string | undefined {
  let text: string;
  try {
    if (statSync(file).size > MAX_SHIM_BYTES) return undefined;
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const root = /^export PYENV_ROOT="([^"$`\\]+)"$/m.exec(text)?.[1];
  if (!root || !text.startsWith("#!") || !text.includes(`exec "${root}/libexec/pyenv" exec "$program" "$@"`)) return undefined;
  return dirname(file) === join(root, "shims") ? root : undefined;
}

/** The version names of a pyenv version file (one per line, # comments), or undefined when it is unreadable. */
function versionNames(file: string): string[] | undefined {
  try {
    if (statSync(file).size > MAX_VERSION_BYTES) return undefined;
    return readFileSync(file, "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
  } catch {
    return undefined;
  }
}

/** The version pyenv selects with no PYENV_VERSION set: a .python-version from `cwd` up, else the global file. */
function pyenvVersions(root: string, cwd: string): string[] | undefined {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const file = join(dir, ".python-version");
    if (statSync(file, { throwIfNoEntry: false })) return versionNames(file);
    if (dir === dirname(dir)) break;
  }
  const global = join(root, "version");
  return statSync(global, { throwIfNoEntry: false }) ? versionNames(global) : ["system"];
}

/**
 * The file `python` starts in an environment of `env` (the probe's: PATH and HOME), as the interpreter names itself
 * (sys.executable: the path run, not followed through links), or undefined when that cannot be told without running
 * it: a pyenv shim is followed only when it selects one installed version (not "system", not several).
 */
export function interpreterFile(python: string, env: NodeJS.ProcessEnv, cwd = process.cwd()): string | undefined {
  const file = located(python, env);
  if (!file) return undefined;
  const root = pyenvRoot(file);
  if (!root) return file;
  const versions = pyenvVersions(root, cwd);
  if (versions?.length !== 1 || versions[0] === "system" || (versions[0] as string).includes("/")) return undefined;
  const target = join(root, "versions", versions[0] as string, "bin", python.split("/").pop() as string);
  return isExecutableFile(target) ? target : undefined;
}
