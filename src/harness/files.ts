import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { harnessError } from "../errors.ts";

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

/** A package (hone's or NexAU's) holds at most this many files, of at most this many bytes together: untrusted input. */
export const MAX_PACKAGE_FILES = 1000;
export const MAX_PACKAGE_BYTES = 64 * 1024 * 1024;

/**
 * listFiles for a package about to be loaded and hashed: refused (naming the folder, the count or the file, and what to
 * do) when it holds more than MAX_PACKAGE_FILES files or more than MAX_PACKAGE_BYTES, before any file is read; a
 * package with a 3 GB file or a skill with twenty thousand files would otherwise be read whole for its hash.
 */
export function listPackageFiles(root: string): string[] {
  const files = listFiles(root);
  if (files.length > MAX_PACKAGE_FILES)
    throw harnessError(
      root,
      undefined,
      `holds ${files.length} files; a harness package holds at most ${MAX_PACKAGE_FILES}: move data and assets out of it`,
    );
  let total = 0;
  for (const f of files) {
    const size = statSync(join(root, f)).size;
    total += size;
    if (total > MAX_PACKAGE_BYTES)
      throw harnessError(
        join(root, f),
        undefined,
        `brings the package past ${MAX_PACKAGE_BYTES / 1024 / 1024} MiB (this file is ${size} bytes); a harness package is text: move large files out of it`,
      );
  }
  return files;
}
