// Where `hone run` builds a run and where it puts it once finished: a hidden folder beside the destination, held by
// this process (the store's lock) until the run is renamed into place, so that a second run into the same destination
// is refused, or, when the destination is a default name, takes the next free one.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { type LockHolder, RUN_LOCK_FILE, type RunLock } from "../store/run-lock.ts";
import { defaultRunDir, refuseNonEmpty, taken } from "./run-dir.ts";
import { claimRunDir, heldMessage } from "./run-writer.ts";

export interface Destination {
  outDir: string;
  /** The hidden folder the run is built in, `.<name>.partial` beside outDir; its hone.lock is this process's. */
  partial: string;
  /** Puts the built run in place (a rename) and lets the destination go. */
  finish(): void;
  /** Removes what was built, unless finish kept it (say so), and lets the destination go. */
  abandon(): void;
}

const partialOf = (outDir: string) => join(dirname(outDir), `.${basename(outDir)}.partial`);

/**
 * Claims `outDir` for a run of this process, or the first free `runs/run-<task>-<time>[-N]` without one. What a killed
 * run left in the hidden folder is removed once it is held. An explicit destination that another run is building, or
 * that a run finished meanwhile, is refused (exit code `usage`) before anything is written.
 */
export function claimDestination(outDir: string | undefined, taskId: string, onNotice?: (text: string) => void): Destination {
  if (outDir !== undefined) {
    const dest = claim(resolve(outDir), onNotice);
    if (dest === "taken") refuseNonEmpty(resolve(outDir));
    else if ("heldBy" in dest) throw new HoneError("usage", heldMessage(resolve(outDir), dest.heldBy, "or choose another --out"));
    return dest as Destination;
  }
  let got: Destination | undefined;
  defaultRunDir(`run-${taskId}`, (d) => {
    const dest = claim(resolve(d), onNotice);
    if (dest !== "taken" && "finish" in dest) got = dest;
    return got !== undefined;
  });
  return got as Destination;
}

/** `outDir`'s hidden folder held, or who holds it, or "taken" when a run is in outDir already (nothing held then). */
function claim(outDir: string, onNotice?: (text: string) => void): Destination | { heldBy: LockHolder } | "taken" {
  const partial = partialOf(outDir);
  mkdirSync(partial, { recursive: true });
  const lock = claimRunDir(partial, onNotice);
  if (!("release" in lock)) return lock;
  // A run that finished into outDir before this one held its folder: refused, and the folder (this process's now) goes.
  if (taken(outDir)) {
    rmSync(partial, { recursive: true, force: true });
    lock.release();
    return "taken";
  }
  for (const left of readdirSync(partial))
    if (left !== RUN_LOCK_FILE) rmSync(join(partial, left), { recursive: true, force: true });
  return held(outDir, partial, lock);
}

function held(outDir: string, partial: string, lock: RunLock): Destination {
  // Kept: refused at the end and left whole where it was built. Placed: renamed into outDir, so not this run's to remove.
  let kept = false;
  let placed = false;
  return {
    outDir,
    partial,
    finish() {
      // A folder holding no run (empty, or a lock file) is replaced; one holding a run is not: whatever wrote it did so
      // without this lock, and this run stays whole where it was built.
      if (existsSync(outDir) && !taken(outDir)) rmSync(outDir, { recursive: true, force: true });
      try {
        renameSync(partial, outDir);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOTEMPTY" && code !== "EEXIST") throw err;
        kept = true;
        throw new HoneError(
          "usage",
          `${outDir} was written by something else while this run went; this run is kept in ${partial}`,
        );
      }
      placed = true;
      lock.release();
      rmSync(join(outDir, RUN_LOCK_FILE), { force: true });
    },
    abandon() {
      if (placed) return;
      if (!kept) rmSync(partial, { recursive: true, force: true });
      lock.release();
    },
  };
}
