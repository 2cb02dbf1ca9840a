import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

/**
 * Resolves `requested` (a path from a URL) inside `root`, or returns null when it would leave it: `..` segments,
 * absolute paths, NUL bytes, and symbolic links that point outside are all refused. The file must exist.
 */
export function resolveInside(root: string, requested: string): string | null {
  if (requested.includes("\0") || isAbsolute(requested)) return null;
  let realRoot: string;
  let target: string;
  try {
    realRoot = realpathSync(root);
    target = realpathSync(resolve(realRoot, requested));
  } catch {
    return null;
  }
  const rel = relative(realRoot, target);
  if (rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel)) return null;
  return target;
}
