import { readdirSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import { isRegularFile } from "./files.ts";

const SKIP = new Set(["node_modules", ".git", "harnesses.git", "rollouts", "candidates", "best", "slurm", "programs"]);

/**
 * Folders holding a regular file `marker` under `root`, `root` itself included, up to `depth` levels down, in path
 * order: a folder that holds it is not searched further; hidden folders and those named in `skip` never are.
 */
export function findDirsHolding(root: string, marker: string, skip: ReadonlySet<string>, depth = 3): string[] {
  const found: string[] = [];
  const walk = (dir: string, level: number) => {
    if (isRegularFile(join(dir, marker))) {
      found.push(dir);
      return;
    }
    if (level >= depth) return;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries)
      if (e.isDirectory() && !skip.has(e.name) && !e.name.startsWith(".")) walk(join(dir, e.name), level + 1);
  };
  walk(root, 0);
  return found.sort();
}

/** Run directories (folders holding a hone.db) under `root`, `root` itself included, up to `depth` levels down. */
export const findRunDirs = (root: string, depth = 3): string[] => findDirsHolding(root, "hone.db", SKIP, depth);

/**
 * The id a run has in URLs: its path relative to the console's root, with "/" separators. The root itself (`hone
 * view runs/cp26`) is named by its folder's name: "." would be no id in a browser, which drops a "." (or "%2E") path
 * segment from every address, so /run/. is /run/.
 */
export function runId(root: string, dir: string): string {
  const rel = relative(root, dir);
  return rel === "" ? basename(resolve(root)) || "run" : rel.split(sep).join("/");
}
