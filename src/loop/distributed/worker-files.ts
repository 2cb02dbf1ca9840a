import { createHash } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { memoryRoot, privateMemoryDir } from "../../task/pool-dir.ts";
import { HarnessCache } from "../runner.ts";
import { unpackDir } from "./job-data.ts";

/** sha256 over a package as it travels (each file's name and text, by name): equal digests, equal packages. */
export function packageDigest(files: Record<string, string>): string {
  const h = createHash("sha256");
  for (const name of Object.keys(files).sort())
    h.update(name)
      .update("\0")
      .update(files[name] as string)
      .update("\0");
  return h.digest("hex");
}

/**
 * A worker's own folder, removed when it closes: the harness packages it was sent, each unpacked and loaded (and its
 * generated code gated) once per content, as the local pool loads a package once per run (every rollout of one
 * candidate carries the same files), and removed in the background past `keep`. A job's own files never come here:
 * they stay in memory until they travel back (`runJobInMemory`).
 */
export class WorkerFiles {
  /** Loaded packages by folder; a package's folder is named by its digest, so this is a cache by content. */
  readonly harnesses = new HarnessCache();
  private root: string | undefined;
  private inMemory = false;
  /** Every folder this worker made: one, unless it had to make another (see dir()). */
  private readonly roots: string[] = [];
  private readonly packages = new Map<string, { dir: string; users: number }>();
  private readonly removals = new Set<Promise<void>>();

  /**
   * `keep`: packages kept unpacked; past that the least recently used one no job is using is removed. `memory`: where
   * this worker's folder may be held in memory now, if anywhere (`memoryRoot()`).
   */
  constructor(
    private readonly keep = 32,
    private readonly memory: () => string | undefined = () => memoryRoot(),
  ) {}

  private dir(): string {
    // In memory where the machine has room (/dev/shm), else beside the warm pools' folders: packages come and go
    // here, and on an ext4 without a journal every removal slows the files created on it for a minute after. A worker
    // killed with -9 leaves its folder, and the next one started here removes it. Made anew, before a job, when it is gone (systemd-logind removes a user's
    // /dev/shm files when their last session ends) or when the memory it is in has no room left (then on disk).
    const memory = this.memory() ?? null;
    const full = this.inMemory && memory === null;
    if (this.root === undefined || full || !existsSync(this.root)) {
      this.root = privateMemoryDir("worker", memory);
      this.inMemory = memory !== null && this.root.startsWith(`${memory}/`);
      this.roots.push(this.root);
    }
    return this.root;
  }

  /** Runs `use` with the package unpacked in a folder that stays while `use` runs. */
  async withPackage<T>(files: Record<string, string>, use: (dir: string) => Promise<T>): Promise<T> {
    const digest = packageDigest(files);
    let entry = this.packages.get(digest);
    if (entry && entry.users === 0 && !existsSync(entry.dir)) {
      // Its folder went with the worker's (see dir()): unpacked again.
      this.packages.delete(digest);
      this.harnesses.forget(entry.dir);
      entry = undefined;
    }
    if (entry)
      this.packages.delete(digest); // set again below: the most recently used is last
    else {
      const dir = join(this.dir(), "harness", digest);
      try {
        unpackDir(files, dir);
      } catch (err) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
      entry = { dir, users: 0 };
    }
    this.packages.set(digest, entry);
    entry.users++;
    this.evict();
    try {
      return await use(entry.dir);
    } finally {
      entry.users--;
    }
  }

  private evict(): void {
    for (const [digest, e] of this.packages) {
      if (this.packages.size <= this.keep) return;
      if (e.users > 0) continue;
      this.packages.delete(digest);
      this.harnesses.forget(e.dir);
      this.discard(e.dir);
    }
  }

  /** Removes a folder in the background; `close` waits for it. */
  discard(dir: string): void {
    const removal: Promise<void> = rm(dir, { recursive: true, force: true })
      .catch(() => undefined)
      .finally(() => this.removals.delete(removal));
    this.removals.add(removal);
  }

  /** Resolves once every background removal so far has finished. */
  async removed(): Promise<void> {
    await Promise.all(this.removals);
  }

  async close(): Promise<void> {
    await this.removed();
    for (const root of this.roots.splice(0)) rmSync(root, { recursive: true, force: true });
    this.root = undefined;
    this.packages.clear();
  }
}
