import { existsSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { memoryRoot, privateMemoryDir } from "../../task/pool-dir.ts";
import { HarnessCache } from "../runner.ts";
import { type JobHarness, packageDigest, unpackDir } from "./job-data.ts";

/** Gets the files of a package a job names by digest alone (a worker's: from its queue's Redis). */
export type FetchPackage = (digest: string) => Promise<Record<string, string>>;

const noFetch: FetchPackage = async (digest) => {
  throw new Error(`the job names its harness package by digest alone (${digest.slice(0, 12)}), and nothing here can fetch it`);
};

const DIGEST = /^[0-9a-f]{64}$/;

/** Where a package's files come from: a job's own (checked against its digest already), or a fetch. */
type Source = Record<string, string> | (() => Promise<Record<string, string>>);

/** A package's folder, the jobs using it, when its files are there, and their source while they are not. */
interface Unpacked {
  dir: string;
  users: number;
  ready: Promise<void>;
  from?: Source;
}

const mismatch = (digest: string) => new Error(`the harness package's files do not match its digest ${digest.slice(0, 12)}`);

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
  private readonly packages = new Map<string, Unpacked>();
  /** Background removals under way, by folder. */
  private readonly removals = new Map<string, Promise<void>>();

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

  /**
   * Runs `use` with the package unpacked in a folder that stays while `use` runs. Jobs that bring a package this worker
   * has not unpacked yet share one fetch and one unpacking; one that failed is forgotten, so a later job tries again.
   * Files a job brings are checked against its digest before anything is shared: a job whose files do not match
   * (anyone who can add a job can name any digest) fails alone, and a job with files of its own that joined an
   * unpacking from another source that failed unpacks its own.
   */
  async withPackage<T>(pkg: JobHarness, use: (dir: string) => Promise<T>, fetch: FetchPackage = noFetch): Promise<T> {
    const { digest, files } = pkg;
    // It names a folder: 64 hex digits, nothing else.
    if (typeof digest !== "string" || !DIGEST.test(digest))
      throw new Error(`a harness package's digest is 64 hex digits, not ${JSON.stringify(digest)?.slice(0, 80)}`);
    if (files && packageDigest(files) !== digest) throw mismatch(digest);
    for (let tries = files ? 2 : 1; ; tries--) {
      const entry = this.take(digest, files ?? (() => fetch(digest)));
      try {
        await entry.ready;
      } catch (err) {
        entry.users--;
        if (tries > 1 && entry.from !== files) continue;
        throw err;
      }
      try {
        return await use(entry.dir);
      } finally {
        entry.users--;
      }
    }
  }

  /** The package's entry, made now (from `from`) unless there is one, marked as used by one more job. */
  private take(digest: string, from: Source): Unpacked {
    let entry = this.packages.get(digest);
    if (entry && entry.users === 0 && !existsSync(entry.dir)) {
      // Its folder went with the worker's (see dir()): unpacked again.
      this.packages.delete(digest);
      this.harnesses.forget(entry.dir);
      entry = undefined;
    }
    if (entry)
      this.packages.delete(digest); // set again below: the most recently used is last
    else entry = this.unpack(digest, from);
    this.packages.set(digest, entry);
    entry.users++;
    this.evict();
    return entry;
  }

  /** The package's folder, named by its digest, ready once its files are here, match the digest and are written. */
  private unpack(digest: string, from: Source): Unpacked {
    const dir = join(this.dir(), "harness", digest);
    const entry: Unpacked = { dir, users: 0, ready: Promise.resolve(), from };
    entry.ready = (async () => {
      // A job's own files were checked before they came here; fetched ones are checked now.
      const got = typeof from === "function" ? await from() : from;
      await this.removals.get(dir);
      if (typeof from === "function" && packageDigest(got) !== digest) throw mismatch(digest);
      unpackDir(got, dir);
      entry.from = undefined; // its files are on disk: not held in memory while the package stays
    })().catch((err: unknown) => {
      rmSync(dir, { recursive: true, force: true });
      if (this.packages.get(digest) === entry) this.packages.delete(digest);
      throw err;
    });
    return entry;
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

  /**
   * Removes a folder in the background; `close` waits for it, and so does a package unpacked into it again meanwhile
   * (`unpack`), which would otherwise lose files to the removal still under way.
   */
  private discard(dir: string): void {
    const removal: Promise<void> = (this.removals.get(dir) ?? Promise.resolve())
      .then(() => rm(dir, { recursive: true, force: true }))
      .catch(() => undefined)
      .finally(() => {
        if (this.removals.get(dir) === removal) this.removals.delete(dir);
      });
    this.removals.set(dir, removal);
  }

  /** Resolves once every background removal so far has finished. */
  async removed(): Promise<void> {
    await Promise.all(this.removals.values());
  }

  async close(): Promise<void> {
    await this.removed();
    for (const root of this.roots.splice(0)) rmSync(root, { recursive: true, force: true });
    this.root = undefined;
    this.packages.clear();
  }
}
