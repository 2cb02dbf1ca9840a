// A run directory's one writer, as the CLI's verbs take it: the store's lock, or an error naming who holds it.
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { type LockHolder, lockRunDir, RUN_LOCK_FILE, type RunLock } from "../store/run-lock.ts";
import { defaultRunDir, followed, refuseNonEmpty, removeHeld } from "./run-dir.ts";

/**
 * Holds `dir` (which must exist) as its run's one writer until released: a second writer, a `--resume` of a run that
 * is still going or a run started twice at once, is refused before it writes anything. The kernel drops the hold when
 * the process ends, so a killed run can be resumed at once.
 */
export function holdRunDir(dir: string, onNotice?: (text: string) => void): RunLock {
  const lock = claimRunDir(dir, onNotice);
  if ("release" in lock) return lock;
  throw new HoneError("usage", heldMessage(dir, lock.heldBy, "before resuming the run (or choose another --out)"));
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

/** Why a folder cannot be claimed; `unnamed` when a process this machine cannot name holds it. */
export interface Refused {
  why: string;
  unnamed?: boolean;
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
 * skipped; a holder this machine cannot name stops the search, since a file system that refuses every lock refuses
 * every next name too.
 */
export function firstFreeRunDir<T extends object>(prefix: string, claim: (dir: string) => T | Refused): T {
  let got: T | undefined;
  defaultRunDir(prefix, (d) => {
    const r = claim(resolve(d));
    if (!("why" in r)) got = r;
    else if (r.unnamed) throw new HoneError("usage", r.why);
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
}): HeldRunDir {
  if (o.resume) {
    const dir = resolve(o.dir as string);
    const lock = holdRunDir(dir, o.onNotice);
    return { dir, lock, abandon: () => lock.release() };
  }
  const existed = o.dir !== undefined && existsSync(resolve(o.dir));
  const { dir, lock } = claimNewRunDir(o.dir, o.prefix, o.onNotice, "choose another --out, or --resume it");
  const abandon = () => {
    try {
      if (!existed) removeHeld(dir);
      else for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
    } finally {
      lock.release();
    }
  };
  return { dir, lock, abandon };
}

/** `dir` made and held, or why not. */
function claimIfFree(
  dir: string,
  onNotice: ((text: string) => void) | undefined,
  hint: string,
): { dir: string; lock: RunLock } | Refused {
  const filled = whyFilled(dir, hint);
  if (filled) return stillWritten(dir) ?? { why: filled };
  mkdirSync(dir, { recursive: true });
  const lock = claimRunDir(dir, onNotice);
  if (!("release" in lock)) return { why: heldMessage(dir, lock.heldBy, "or choose another --out"), unnamed: !lock.heldBy.pid };
  // A run that another process finished there before this one held it.
  const since = whyFilled(dir, hint);
  if (!since) return { dir, lock };
  lock.release();
  return { why: since };
}

/** Who is still writing the run in `dir`, if anyone: looked at only where its lock file is (never made here). */
function stillWritten(dir: string): Refused | undefined {
  if (!existsSync(join(dir, RUN_LOCK_FILE))) return undefined;
  const lock = claimRunDir(dir);
  if ("release" in lock) {
    lock.release();
    return undefined;
  }
  return { why: heldMessage(dir, lock.heldBy, "or choose another --out"), unnamed: !lock.heldBy.pid };
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
