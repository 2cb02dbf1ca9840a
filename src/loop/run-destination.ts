// Where `hone run` builds a run and where it puts it once finished: a hidden folder beside the destination, held by
// this process (the store's lock) until the run is renamed into place, so that a second run into the same destination
// is refused, or, when the destination is a default name, takes the next free one.
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { type LockHolder, RUN_LOCK_FILE, type RunLock } from "../store/run-lock.ts";
import { followed, holdsAnything, removeHeld } from "./run-dir.ts";
import { claimInPlace, firstFreeRunDir, NO_LOCK, type Refused, refusedBy } from "./run-writer.ts";

export interface Destination {
  outDir: string;
  /** The hidden folder the run is built in, `.<name>.partial` beside outDir (held by this process's lock). */
  partial: string;
  /** Puts the built run in place (a rename) and lets the destination go. */
  finish(): void;
  /** Removes what was built and lets the destination go; nothing once the run was put in place or kept. */
  abandon(): void;
}

/** Whether `dir` is taken for a new run: a folder holding anything at all, or something that is not a folder. */
const filled = (dir: string) => holdsAnything(dir);

/** Refuses an --out that holds anything (exit code `usage`). */
export function refuseFilled(outDir: string): void {
  if (filled(outDir)) throw notEmpty(outDir);
}

/** Why `outDir` is taken, as `hone optimize` and `hone eval` say it (run-dir.ts `refuseNonEmpty`). */
const notEmpty = (outDir: string) =>
  new HoneError(
    "usage",
    isFolder(outDir)
      ? `${outDir} already exists and is not empty; choose another --out`
      : `${outDir} is a file, not a folder; choose another --out`,
  );

const isFolder = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return true; // gone meanwhile, or unreadable: said as a taken folder
  }
};

const beside = (outDir: string, suffix: string) => join(dirname(outDir), `.${basename(outDir)}.${suffix}`);

/**
 * Claims `outDir` for a run of this process, or the first free `runs/run-<task>-<time>[-N]` without one. What a killed
 * run left in the hidden folder is removed once it is held. An explicit destination that another run is building, or
 * that a run finished into meanwhile, is refused (exit code `usage`) before anything of the run is written.
 */
export function claimDestination(outDir: string | undefined, taskId: string, onNotice?: (text: string) => void): Destination {
  const take = (d: string) => refusedOr(d, claim(d, onNotice));
  if (outDir === undefined) return firstFreeRunDir(`run-${taskId}`, take);
  const got = take(followed(resolve(outDir)));
  if ("why" in got) throw new HoneError("usage", got.why);
  return got;
}

/** A claim's outcome as the search for a free name reads it: the destination, or why `outDir` cannot be it. */
function refusedOr(outDir: string, got: ReturnType<typeof claim>): Destination | Refused {
  if (got === "taken") return { why: notEmpty(outDir).message };
  if ("heldBy" in got) return refusedBy(outDir, got.heldBy);
  return got;
}

/** `outDir`'s hidden folder held, or who holds it, or "taken" when outDir holds something already (nothing held). */
function claim(outDir: string, onNotice?: (text: string) => void): Destination | { heldBy: LockHolder } | "taken" {
  if (filled(outDir)) return "taken";
  const shared = beside(outDir, "partial");
  // Without the lock nothing keeps two runs out of one folder: each builds in a folder of its own, as it did before
  // the lock, and the rename at the end refuses to replace a run (the later one is kept beside).
  if (process.env[NO_LOCK] === "off") return unguarded(outDir, onNotice, `${NO_LOCK}=off`);
  // Said once, of outDir as the user gave it (below), not of the hidden folder the lock is taken in.
  const lock = claimInPlace(shared, undefined, outDir);
  if (!("release" in lock)) return lock;
  if (lock.unguarded) {
    rmSync(join(shared, RUN_LOCK_FILE), { force: true });
    tryRmdir(shared);
    return unguarded(outDir, onNotice, lock.unguarded);
  }
  // A run that finished into outDir before this one held the folder: refused, and the folder (this process's) goes.
  if (filled(outDir)) {
    removeHeld(shared);
    lock.release();
    return "taken";
  }
  for (const left of readdirSync(shared))
    if (left !== RUN_LOCK_FILE) rmSync(join(shared, left), { recursive: true, force: true });
  return held(outDir, shared, lock);
}

function unguarded(outDir: string, onNotice: ((text: string) => void) | undefined, why: string): Destination {
  onNotice?.(`${outDir} is built without its lock (${why}): a second run into it is not refused until it finishes`);
  const own = beside(outDir, `partial-${process.pid}`);
  rmSync(own, { recursive: true, force: true });
  mkdirSync(own, { recursive: true });
  return held(outDir, own, { release: () => {} });
}

function held(outDir: string, partial: string, lock: RunLock): Destination {
  // Put in place, kept beside, or removed: nothing of this run is left for abandon to remove.
  let settled = false;
  return {
    outDir,
    partial,
    finish() {
      try {
        renameSync(partial, outDir); // replaces an empty folder, never one holding anything (ENOTEMPTY)
      } catch (err) {
        // Whatever went wrong, the finished run is not removed: it is moved beside, where the next run leaves it.
        settled = true;
        const kept = keep(partial, outDir);
        lock.release();
        const code = (err as NodeJS.ErrnoException).code;
        if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR")
          throw new HoneError(
            "usage",
            `${outDir} is not an empty folder any more (something else wrote there while this run went); this run is kept in ${kept}`,
          );
        throw new Error(`this run could not be put in ${outDir} (${(err as Error).message}); it is kept in ${kept}`);
      }
      settled = true;
      lock.release();
      rmSync(join(outDir, RUN_LOCK_FILE), { force: true });
    },
    abandon() {
      if (settled) return;
      settled = true;
      try {
        removeHeld(partial);
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * Moves a finished run that could not be put in place out of the hidden folder, which the next run would clear, to the
 * first free `.<name>.kept-<pid>[-N]` (a kept run of an earlier process with the same pid stays). Where even that
 * fails, it stays where it was built, and that is said instead.
 */
function keep(partial: string, outDir: string): string {
  for (let n = 1; n <= 100; n++) {
    const kept = beside(outDir, n === 1 ? `kept-${process.pid}` : `kept-${process.pid}-${n}`);
    if (existsSync(kept)) continue;
    try {
      renameSync(partial, kept);
    } catch {
      return partial;
    }
    rmSync(join(kept, RUN_LOCK_FILE), { force: true });
    return kept;
  }
  return partial;
}

function tryRmdir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // not empty (another process's): left
  }
}
