import { readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { isRegularFile } from "./files.ts";

const SKIP = new Set(["node_modules", ".git", "harnesses.git", "rollouts", "candidates", "best", "slurm", "programs"]);

/** Run directories (folders holding a hone.db) under `root`, `root` itself included, up to `depth` levels down. */
export function findRunDirs(root: string, depth = 3): string[] {
  const found: string[] = [];
  const walk = (dir: string, level: number) => {
    if (isRegularFile(join(dir, "hone.db"))) {
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
      if (e.isDirectory() && !SKIP.has(e.name) && !e.name.startsWith(".")) walk(join(dir, e.name), level + 1);
  };
  walk(root, 0);
  return found.sort();
}

/** The id a run has in URLs: its path relative to the console's root, with "/" separators ("." for the root). */
export function runId(root: string, dir: string): string {
  const rel = relative(root, dir);
  return rel === "" ? "." : rel.split(sep).join("/");
}
