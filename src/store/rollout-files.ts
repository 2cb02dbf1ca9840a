import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Where a rollout writes its files (each evaluated program, the best program): the folder it is being built in, or
 * memory, for a worker that ships the rollout's files back instead of writing them twice.
 */
export interface RolloutFiles {
  /** Writes one file, named by its path inside the rollout's folder ("programs/0001.py"). */
  write(path: string, text: string): void;
}

/**
 * Files in `dir`, a folder that appears under its final name only once whole (a `.partial` folder renamed into
 * place), so a plain write is enough; each parent folder is made once.
 */
export function folderFiles(dir: string): RolloutFiles {
  const made = new Set<string>();
  return {
    write(path, text) {
      const file = join(dir, path);
      const parent = dirname(file);
      if (!made.has(parent)) mkdirSync(parent, { recursive: true });
      made.add(parent);
      writeFileSync(file, text);
    },
  };
}

/** Files kept in memory by path, as a rollout folder's files travel (`packDir`). */
export class MemoryFiles implements RolloutFiles {
  readonly files: Record<string, string> = {};
  write(path: string, text: string): void {
    this.files[path] = text;
  }
}
