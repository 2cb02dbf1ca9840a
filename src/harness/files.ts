import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/** Every file under a directory, as sorted relative paths with forward slashes. */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === ".git" || e.name === "node_modules") continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(root, p).split("\\").join("/"));
    }
  };
  walk(root);
  return out.sort();
}

/** sha256 over (path, bytes) of every file: two packages with the same hash are the same harness. */
export function contentHash(root: string, files = listFiles(root)): string {
  const h = createHash("sha256");
  for (const f of files) {
    h.update(f)
      .update("\0")
      .update(readFileSync(join(root, f)))
      .update("\0");
  }
  return h.digest("hex");
}
