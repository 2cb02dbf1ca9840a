import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  type Stats,
  statfsSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HoneError } from "../errors.ts";

/** `<root>/hone-<uid>`: the name of this user's folder in `root`. */
const userBase = (root: string): string => join(root, `hone-${process.getuid?.() ?? "user"}`);

/** Whether a folder's lstat is this user's own real folder: not a link, not another user's. */
const ours = (st: Stats | undefined): boolean =>
  st?.isDirectory() === true && !st.isSymbolicLink() && (!process.getuid || st.uid === process.getuid());

/** hone's own folder in `root`, one per user: `<root>/hone-<uid>/`, 0700, never a symbolic link. */
function baseIn(root: string): string {
  const base = userBase(root);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  if (!ours(lstatSync(base))) throw new HoneError("internal", `${base} is not a folder owned by you; remove it and run again`);
  chmodSync(base, 0o700);
  return base;
}

/** hone's own folder for warm pools, one per user: `$TMPDIR/hone-<uid>/`. */
const poolBase = (): string => baseIn(tmpdir());

/** Where folders held in memory go: the system's shared-memory tmpfs, used only with this much room free. */
export const MEMORY_ROOT = "/dev/shm";
const MEMORY_MIN_FREE = 2 ** 30;
const TMPFS_MAGIC = 0x01021994;

/** What memoryRoot() asks of a folder: its file system's type and free bytes, whether it is sticky and root's. */
export interface MemoryRootFacts {
  type: number;
  free: number;
  stickyRootOwned: boolean;
}

const factsOf = (root: string): MemoryRootFacts => {
  const fs = statfsSync(root);
  const st = statSync(root);
  return { type: fs.type, free: fs.bavail * fs.bsize, stickyRootOwned: (st.mode & 0o1000) !== 0 && st.uid === 0 };
};

/**
 * `root` when it is a tmpfs with at least 1 GiB free (a container's 64 MB /dev/shm is not), sticky and owned by root
 * as /tmp is (so no other user can move this user's folder there aside); else undefined. Asked again before each job.
 */
export function memoryRoot(root = MEMORY_ROOT, facts: (root: string) => MemoryRootFacts = factsOf): string | undefined {
  try {
    const f = facts(root);
    return f.type === TMPFS_MAGIC && f.free >= MEMORY_MIN_FREE && f.stickyRootOwned ? root : undefined;
  } catch {
    return undefined;
  }
}

/**
 * This process's PID namespace (the inode of /proc/self/ns/pid). A folder in a place that processes of other PID
 * namespaces share (a /dev/shm shared between containers) carries it, since only a process of the same namespace can
 * tell from its pid whether its maker still runs.
 */
export function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
  } catch {
    return "0";
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the `kind` folders (pool, worker) of hone processes that no longer exist (a kill -9 leaves them behind):
 * with `ns`, only those made in that PID namespace (`<kind>-<pid>-ns<ns>-…`), else only those without one.
 */
export function removeStalePools(base = poolBase(), kind = "pool", ns?: string): void {
  for (const name of readdirSync(base)) {
    const m = /^([a-z]+)-(\d+)-(?:ns(\d+)-)?/.exec(name);
    if (m?.[1] !== kind || m[3] !== ns) continue; // another kind, or another namespace's: its pid means nothing here
    const pid = Number(m[2]);
    if (pid !== process.pid && !alive(pid)) rmSync(join(base, name), { recursive: true, force: true });
  }
}

/** A fresh private folder of this process, `$TMPDIR/hone-<uid>/<kind>-<pid>-…`; dead processes' ones are removed. */
export function privateDir(kind: "pool" | "worker"): string {
  const base = poolBase();
  removeStalePools(base, kind);
  return mkdtempSync(join(base, `${kind}-${process.pid}-`));
}

/** `<root>/hone-<uid>` when it is already this user's folder (not a link), else undefined; never made here. */
export function ownBase(root: string): string | undefined {
  const base = userBase(root);
  return ours(lstatSync(base, { throwIfNoEntry: false })) ? base : undefined;
}

/**
 * privateDir() in memory where it can be (`memory`: by default `memoryRoot()`, null for none; what is written and
 * removed there never reaches a disk), as `<memory>/hone-<uid>/<kind>-<pid>-ns<pid namespace>-…`, else on disk as
 * privateDir() makes it. Dead processes' folders of this kind are removed from both places (in memory, only those of
 * this PID namespace).
 */
export function privateMemoryDir(kind: "worker", memory: string | null = memoryRoot() ?? null): string {
  let base: string | undefined;
  if (memory !== null)
    try {
      base = baseIn(memory);
    } catch {
      // another user's folder (or a link) in the way: on disk instead
    }
  const ns = pidNamespace();
  const inMemory = base ?? ownBase(MEMORY_ROOT);
  if (inMemory) removeStalePools(inMemory, kind, ns);
  if (base === undefined) return privateDir(kind);
  const disk = ownBase(tmpdir());
  if (disk) removeStalePools(disk, kind);
  return mkdtempSync(join(base, `${kind}-${process.pid}-ns${ns}-`));
}

/**
 * A fresh private folder for one warm pool: `sock/` for the program zygote's socket and, only where bubblewrap
 * is missing, `work/` for the evaluators' scratch folders (under bubblewrap they have a private /tmp).
 */
export function makePoolDir(): string {
  const dir = privateDir("pool");
  mkdirSync(join(dir, "sock"), { mode: 0o700 });
  mkdirSync(join(dir, "work"), { mode: 0o700 });
  return dir;
}
