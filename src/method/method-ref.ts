import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * Whether a method's name names a folder (an external method): a path, or a folder with method.json in `base` (the
 * current folder, or a config file's).
 */
export const isMethodFolder = (name: string, base = "."): boolean =>
  name.includes("/") || existsSync(join(base, name, "method.json"));

/** A method as a run records it: a folder made absolute (its run may be resumed from another folder), a name as given. */
export const recordedMethodRef = (name: string, base = "."): string => (isMethodFolder(name, base) ? resolve(base, name) : name);
