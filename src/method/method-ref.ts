import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { isBuiltinMethod } from "./catalog.ts";

/**
 * Whether a method's name names a folder (an external method): a path, or a folder with method.json in `base` (the
 * current folder, or a config file's) whose name is not a built-in method's. A built-in name always means the
 * built-in (a folder `random/` beside the user must not stand in for the baseline `random`): give such a folder
 * as a path (`./random`).
 */
export function isMethodFolder(name: string, base = "."): boolean {
  if (name.includes("/")) return true;
  const folder = existsSync(join(base, name, "method.json"));
  if (!isBuiltinMethod(name)) return folder;
  if (folder) warnShadowed(name, resolve(base, name));
  return false;
}

const warned = new Set<string>();

/** Says once per folder (on stderr) that a built-in method's name was taken for the built-in, not the folder. */
function warnShadowed(name: string, folder: string): void {
  if (warned.has(folder)) return;
  warned.add(folder);
  process.stderr.write(
    `hone: method "${name}" is the built-in method; the folder ${folder} (it has a method.json) is not used: write ./${name} (a path) to use the folder instead\n`,
  );
}

/** A method as a run records it: a folder made absolute (its run may be resumed from another folder), a name as given. */
export const recordedMethodRef = (name: string, base = "."): string => (isMethodFolder(name, base) ? resolve(base, name) : name);
