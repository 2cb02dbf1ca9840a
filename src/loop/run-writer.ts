// A run directory's one writer, as the CLI's verbs take it: the store's lock, or an error naming who holds it.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, type Stats, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { type LockHolder, lockRunDir, locksRefused, RUN_LOCK_FILE, type RunLock } from "../store/run-lock.ts";
import { defaultRunDir, followed, holdsAnything, refuseNonEmpty, removeHeld } from "./run-dir.ts";

/**
 * Holds `dir` (which must exist) as its run's one writer until released: a second writer, a `--resume` of a run that
 * is still going or a run started twice at once, is refused before it writes anything. The kernel drops the hold when
 * the process ends, so a killed run can be resumed at once.
 */
export function holdRunDir(dir: string, onNotice?: (text: string) => void): RunLock {
  const path = join(dir, RUN_LOCK_FILE);
  const before = statSync(path, { throwIfNoEntry: false });
  const lock = claimRunDir(dir, onNotice);
  if (!("release" in lock))
    throw new HoneError("usage", heldMessage(dir, lock.heldBy, "before resuming the run (or choose another --out)"));
  // A lock file removed meanwhile (a failed start's folder going) is no one's to hold.
  const after = statSync(path, { throwIfNoEntry: false });
  if (lock.unguarded || (after !== undefined && (before === undefined || sameFile(before, after)))) return lock;
  lock.release();
  throw new HoneError("usage", `${dir} was removed or replaced while this process took it; look at it before resuming`);
}

/** Holds `dir` as holdRunDir does, or names the process that holds it already, for the caller to say or go elsewhere. */
export function claimRunDir(dir: string, onNotice?: (text: string) => void): RunLock | { heldBy: LockHolder } {
  if (process.env[NO_LOCK] === "off") {
    onNotice?.(`${NO_LOCK}=off: ${dir} is written without its lock; nothing refuses a second writer`);
    return { release: () => {}, unguarded: `${NO_LOCK}=off` };
  }
  const lock = lockRunDir(dir);
  if ("failed" in lock)
    throw new HoneError(
      "usage",
      `${dir}: its lock file ${RUN_LOCK_FILE} cannot be locked (${lock.failed}); remove it if no hone process is writing the run`,
    );
  if ("release" in lock && lock.unguarded)
    onNotice?.(`${dir} is on a file system without locks (${lock.unguarded}): nothing refuses a second writer`);
  return lock;
}

/** Why a folder cannot be claimed; `locksRefused` where the file system refuses every lock (refusedBy). */
export interface Refused {
  why: string;
  locksRefused?: boolean;
}

/**
 * A new run's folder, held for this process before anything is written in it: `dir`, or the first free
 * `runs/<prefix>-<time>[-N]` (a name another process holds is skipped, so runs started together get a folder each). A
 * `dir` that holds a run, or that another process holds, is refused (exit code `usage`).
 */
export function claimNewRunDir(
  dir: string | undefined,
  prefix: string,
  onNotice?: (text: string) => void,
  hint = "choose another --out",
): { dir: string; lock: RunLock } {
  const take = (d: string) => claimIfFree(d, onNotice, hint);
  if (dir === undefined) return firstFreeRunDir(prefix, take);
  const got = take(followed(resolve(dir)));
  if ("why" in got) throw new HoneError("usage", got.why);
  return got;
}

/**
 * What `claim` gives for the first free `runs/<prefix>-<time>[-N]` it takes (paths absolute), a name it refuses being
 * skipped; a file system that refuses every lock (`locksRefused`) stops the search, since it refuses every next
 * name too.
 */
export function firstFreeRunDir<T extends object>(prefix: string, claim: (dir: string) => T | Refused): T {
  let got: T | undefined;
  defaultRunDir(prefix, (d) => {
    const r = claim(resolve(d));
    if (!("why" in r)) got = r;
    else if (r.locksRefused) throw new HoneError("usage", r.why);
    return got !== undefined;
  });
  return got as T;
}

/** A run's folder held by this process: `abandon` undoes a start that failed (takeRunDir). */
export interface HeldRunDir {
  dir: string;
  lock: RunLock;
  abandon(): void;
}

/**
 * A run's folder as `hone optimize` and `hone train` take it, before they check anything else: a resumed run's held
 * (holdRunDir), a new run's claimed (claimNewRunDir: runs started together without --out each get a folder, and a
 * second run into one --out is refused naming the first). `abandon` undoes a start that failed: a new run's folder is
 * removed (only what was written in it, when it was there before, empty), then let go.
 */
export function takeRunDir(o: {
  dir: string | undefined;
  prefix: string;
  resume: boolean;
  onNotice?: (text: string) => void;
  /** What a refusal of `dir` suggests (default: another --out, or --resume). */
  hint?: string;
}): HeldRunDir {
  if (o.resume) {
    const dir = resolve(o.dir as string);
    const lock = holdRunDir(dir, o.onNotice);
    return { dir, lock, abandon: () => lock.release() }; // a resumed run's folder and records stay
  }
  const existed = o.dir !== undefined && existsSync(resolve(o.dir));
  const { dir, lock } = claimNewRunDir(o.dir, o.prefix, o.onNotice, o.hint ?? "choose another --out, or --resume it");
  let done = false;
  const abandon = () => {
    if (done) return; // once: a second call could meet another run's folder of the same name
    done = true;
    try {
      if (!existed) removeHeld(dir);
      // The lock file stays (a folder holding only it is free): removed while held, it could be locked twice at once.
      else for (const f of readdirSync(dir)) if (f !== RUN_LOCK_FILE) rmSync(join(dir, f), { recursive: true, force: true });
    } finally {
      lock.release();
    }
  };
  // Let go by its writer, the run is its own: abandon (a stop's cleanup come late) removes nothing any more.
  const release = () => {
    done = true;
    lock.release();
  };
  return { dir, lock: { ...lock, release }, abandon };
}

/**
 * Removes `dir` where it holds nothing but its lock file and no process holds it: a folder made for a run that never
 * began (a replay's). Held while it goes, as a failed start's folder is (takeRunDir).
 */
export function removeUnused(dir: string): void {
  const unused = () => !holdsAnything(dir, (name) => name !== RUN_LOCK_FILE);
  if (!existsSync(dir) || !unused()) return;
  let lock: ReturnType<typeof claimRunDir>;
  try {
    lock = claimRunDir(dir);
  } catch {
    return; // its lock file cannot be locked: left as it is
  }
  if (!("release" in lock)) return; // another process holds it: its own now
  try {
    if (unused()) removeHeld(dir);
  } finally {
    lock.release();
  }
}

/**
 * Makes `dir` and holds its hone.lock, checking that the file held is the one at that path still: a holder that
 * removes a folder it held (a failed start, hone run's hidden folder once placed) renames it away first and lets go
 * after, so a process that opened the file just before could otherwise hold a lock on a file no other process sees,
 * beside the next holder of the folder made anew. Tried again when it was, or when the folder went meanwhile. Errors
 * name `shown`, the folder as the user gave it (hone run builds in a hidden folder beside its --out).
 */
export function claimInPlace(dir: string, onNotice?: (text: string) => void, shown = dir): ReturnType<typeof claimRunDir> {
  const path = join(dir, RUN_LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    let lock: ReturnType<typeof claimRunDir>;
    let before: Stats | undefined;
    try {
      mkdirSync(dir, { recursive: true });
      made(path); // there before it is looked at
      before = statSync(path, { throwIfNoEntry: false });
      lock = claimRunDir(dir, onNotice);
    } catch (err) {
      // removed between the steps: made anew; but a folder its file system will not make (procfs) is no race
      if (vanished(err, path) && (err as NodeJS.ErrnoException).syscall !== "mkdir") continue;
      throw unmade(shown, err);
    }
    if (!("release" in lock) || lock.unguarded) return lock;
    if (sameFile(before, statSync(path, { throwIfNoEntry: false }))) return lock;
    lock.release();
  }
  throw new HoneError("usage", `${shown} was removed or replaced each time this process took it; try again`);
}

/** The same file at both looks: its inode, and its birth time where the file system keeps one (inodes are reused). */
const sameFile = (a: Stats | undefined, b: Stats | undefined) =>
  a !== undefined && b !== undefined && a.ino === b.ino && a.dev === b.dev && a.birthtimeMs === b.birthtimeMs;

/** Whether a step failed because the folder or its lock file went meanwhile (another process removed them). */
const vanished = (err: unknown, path: string) =>
  (err as NodeJS.ErrnoException).code === "ENOENT" || (err instanceof HoneError && !existsSync(path));

/** A folder that cannot be made, or its lock file (no permission, a read-only or full disk), as a user reads it. */
function unmade(dir: string, err: unknown): Error {
  if (err instanceof HoneError) return err;
  const { code, message } = err as NodeJS.ErrnoException;
  return new HoneError("usage", `${dir}: the run's folder cannot be made there (${code ?? message}); choose another --out`);
}

/**
 * Makes an empty file at `path` unless one is there. Never opens one that is there: closing any descriptor of a file
 * drops every POSIX lock this process holds on it, and this process may hold the lock on that one.
 */
function made(path: string): void {
  try {
    closeSync(openSync(path, "wx"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

/** `dir` made and held, or why not. */
function claimIfFree(
  dir: string,
  onNotice: ((text: string) => void) | undefined,
  hint: string,
): { dir: string; lock: RunLock } | Refused {
  const filled = whyFilled(dir, hint);
  if (filled) return stillWritten(dir) ?? { why: filled };
  const lock = claimInPlace(dir, onNotice);
  if (!("release" in lock)) return refusedBy(dir, lock.heldBy);
  // A run that another process finished there before this one held it.
  const since = whyFilled(dir, hint);
  if (!since) return { dir, lock };
  lock.release();
  return { why: since };
}

/** Who is still writing the run in `dir`, if anyone: looked at only where its lock file is (never made here). */
function stillWritten(dir: string): Refused | undefined {
  const path = join(dir, RUN_LOCK_FILE);
  if (!existsSync(path)) return undefined;
  let lock: ReturnType<typeof claimRunDir>;
  try {
    lock = claimRunDir(dir);
  } catch (err) {
    if (vanished(err, path)) return undefined; // removed meanwhile: nobody writes there
    throw err;
  }
  if ("release" in lock) {
    lock.release();
    return undefined;
  }
  return refusedBy(dir, lock.heldBy);
}

/**
 * A folder another process holds, as a new run is refused it. A holder this machine cannot name (no /proc/locks, as
 * on macOS, or a process on another machine) is told apart from a file system that refuses every lock by a lock on a
 * file of this process's own beside the folder: only the latter stops a search for a free name.
 */
export function refusedBy(dir: string, heldBy: LockHolder): Refused {
  const why = heldMessage(dir, heldBy, "or choose another --out");
  return heldBy.pid ? { why } : { why, locksRefused: locksRefused(dirname(dir)) };
}

/** Why `dir` cannot take a new run (it holds one), or undefined when it can. */
function whyFilled(dir: string, hint: string): string | undefined {
  try {
    refuseNonEmpty(dir, hint);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Why `dir` cannot be written now: who holds it, and what to do (`advice`, after "wait for it to end, or stop it,"). */
export function heldMessage(dir: string, { pid, command }: LockHolder, advice: string): string {
  if (!pid)
    return `${dir} is locked by a process this machine cannot name (one on another machine, or a file system that refuses locks); wait for it to end, or, if no other hone process writes this run, set ${NO_LOCK}=off`;
  return `${dir} is being written by another hone process (pid ${pid}${command ? `: ${command}` : ""}); wait for it to end, or stop it, ${advice}`;
}

/** The environment variable that turns the lock off, for a file system whose locks refuse every process. */
export const NO_LOCK = "HONE_RUN_LOCK";
