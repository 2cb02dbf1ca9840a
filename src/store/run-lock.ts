// A run directory's one writer: a lock the kernel holds for the writing process and drops when it ends, however it ends.
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Database, type Db } from "./db.ts";

/** The file in a run directory whose lock marks the process writing the run. It stays when the run ends (see below). */
export const RUN_LOCK_FILE = "hone.lock";

export interface RunLock {
  /** Lets the next writer in; the file stays, since a lock file removed by its holder can be locked twice at once. */
  release(): void;
  /** Set when the folder's file system takes no locks (the run is written unguarded): why. */
  unguarded?: string;
}

/** The process that holds a run's lock, as this machine's kernel knows it (nothing is known of another machine's). */
export interface LockHolder {
  pid?: number;
  command?: string;
}

/**
 * Takes the writer lock of run directory `dir` (which must exist), or says who holds it. The lock is SQLite's
 * reserved lock on `hone.lock` (one holder at a time), a POSIX record lock: the kernel drops it when its process
 * exits, so a killed run leaves nothing stale to clear, and a second connection in the same process is refused as
 * another process is. A refusal that names nobody is tried again a few times: the holder may have let go between
 * the refusal and the look at /proc/locks.
 */
export function lockRunDir(dir: string): RunLock | { heldBy: LockHolder } | { failed: string } {
  const path = join(dir, RUN_LOCK_FILE);
  for (let attempt = 1; ; attempt++) {
    const got = tryLock(path);
    if (!("heldBy" in got) || got.heldBy.pid || attempt === UNNAMED_TRIES) return got;
    Atomics.wait(pause, 0, 0, attempt * 2 + Math.random() * 3); // a few ms, so that two claimers fall out of step
  }
}

/** How many times a refusal naming nobody is tried (on a file system that refuses every lock, each one is). */
const UNNAMED_TRIES = 4;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * One try. BEGIN IMMEDIATE takes SQLite's shared lock, then its reserved lock; BEGIN EXCLUSIVE would go on to its
 * pending and exclusive locks, which any other connection's shared lock refuses: two processes trying at the same
 * moment each held a shared lock the other's exclusive step met, so both were refused, and named nobody (measured:
 * 278 times in 300 tries in step). A reserved lock is refused only by another reserved one, whose holder goes on.
 */
function tryLock(path: string): RunLock | { heldBy: LockHolder } | { failed: string } {
  let db: Db | undefined;
  try {
    db = Database(path, { timeout: 0 });
    // The journal kept in memory: BEGIN on an empty file would otherwise write hone.lock-journal beside it.
    db.pragma("journal_mode = MEMORY");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN IMMEDIATE");
  } catch (err) {
    db?.close();
    const code = (err as { code?: string }).code ?? "";
    // SQLite reports a lock refused by a file system that cannot lock (ENOLCK) as busy too: lockHolder names nobody.
    if (code === "SQLITE_BUSY") return { heldBy: lockHolder(path) };
    // A file system without record locks (some FUSE ones): a run there is not refused, only unguarded.
    if (code === "SQLITE_NOLFS" || (code.startsWith("SQLITE_IOERR") && code.includes("LOCK")))
      return { release: () => {}, unguarded: code };
    return { failed: (err as Error).message };
  }
  held.add(db);
  return {
    release: () => {
      if (!held.delete(db)) return;
      db.exec("ROLLBACK");
      db.close();
    },
  };
}

/**
 * Whether the file system of folder `dir` refuses every lock: a lock on a new file of this process's own there (a
 * random name, removed after) is refused as busy. A file that cannot be made there says nothing either way: false.
 */
export function locksRefused(dir: string): boolean {
  const path = join(dir, `.hone-lock-probe-${process.pid}-${randomBytes(6).toString("hex")}`);
  try {
    const got = tryLock(path);
    if ("release" in got) got.release();
    return "heldBy" in got;
  } finally {
    try {
      rmSync(path, { force: true });
    } catch {
      // not made, or not ours to remove after all: nothing to do
    }
  }
}

/**
 * The connections holding locks, kept here until released: a connection nothing refers to is closed when it is
 * collected, and its lock goes with it, whatever its holder still writes.
 */
const held = new Set<Db>();

/** The most of /proc/locks and of a command line that is read: both are the kernel's, but a machine can hold many locks. */
const MAX_LOCKS_BYTES = 4 * 1024 * 1024;
const MAX_COMMAND_CHARS = 200;

/** Who holds a POSIX lock on `path`, from /proc/locks (Linux); empty where that is not known. */
function lockHolder(path: string): LockHolder {
  try {
    const { dev, ino } = statSync(path);
    const device = `${hex2((dev >>> 8) & 0xfff)}:${hex2((dev & 0xff) | ((dev >>> 12) & 0xfff00))}`;
    // The holder's line: "N: POSIX ADVISORY WRITE <pid> <major>:<minor>:<inode> <start> <end>" (a line "N: -> POSIX"
    // is a process waiting for it). Where stat's device is not the one the kernel prints there (btrfs subvolumes),
    // a line with the inode alone names it. A READ line may be another process's passing shared lock (one trying at
    // the same moment): it is named only when no WRITE line (the holder's reserved lock) is there.
    const found: { pid: number; exact: boolean; write: boolean }[] = [];
    for (const line of readAtMost("/proc/locks", MAX_LOCKS_BYTES).split("\n")) {
      const parts = line.trim().split(/\s+/);
      const pid = Number(parts[4]);
      if (parts[1] !== "POSIX" || !Number.isInteger(pid) || pid <= 0) continue;
      if (parts[5]?.endsWith(`:${ino}`)) found.push({ pid, exact: parts[5] === `${device}:${ino}`, write: parts[3] === "WRITE" });
    }
    const rank = (f: (typeof found)[number]) => (f.exact ? 2 : 0) + (f.write ? 1 : 0);
    const best = found.sort((a, b) => rank(b) - rank(a))[0];
    if (best) return { pid: best.pid, command: commandOf(best.pid) };
  } catch {
    // Not Linux, or /proc not mounted: the holder stays unnamed.
  }
  return {};
}

const hex2 = (n: number) => n.toString(16).padStart(2, "0");

/** The first `max` bytes of a file (of /proc, whose size stat does not give), as Latin-1 text. */
function readAtMost(path: string, max: number): string {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(max);
    let n = 0;
    for (let got = 1; got > 0 && n < max; n += got) got = readSync(fd, buf, n, max - n, null);
    return buf.toString("latin1", 0, n);
  } finally {
    closeSync(fd);
  }
}

/** A process's command line as one line of printable text, shortened; undefined when it cannot be read. */
function commandOf(pid: number): string | undefined {
  try {
    const raw = readAtMost(`/proc/${pid}/cmdline`, 4096);
    const text = raw
      .split("\0")
      .filter(Boolean)
      .join(" ")
      .replace(/[^\x20-\x7e]/g, "?");
    return text.length > MAX_COMMAND_CHARS ? `${text.slice(0, MAX_COMMAND_CHARS)}…` : text || undefined;
  } catch {
    return undefined;
  }
}
