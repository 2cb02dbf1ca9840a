import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Writes a file so that readers see the old content or the new, never half of it. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/** A value as hone's JSON files hold it: indented, one newline at the end. */
export const jsonText = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, jsonText(value));
}

/**
 * Removes what killed writers left in `dir`: every entry whose name starts with `prefix` (a folder built beside and
 * renamed into place once whole, named by the process that made it). For one writer per folder: none is in use now.
 */
export function removePartials(dir: string, prefix: string): void {
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir)) if (f.startsWith(prefix)) rmSync(join(dir, f), { recursive: true, force: true });
}

/** Flushes a file's content, or a folder's entries (a file renamed into it), to the disk. */
export function syncToDisk(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
