// What every run directory shares: refusing a non-empty folder, a copy of the harness it measured, a time stamp.
import { copyFileSync, lstatSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, type Stats, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { HoneError } from "../errors.ts";
import { listFiles } from "../harness/files.ts";

export const stamp = () => new Date().toISOString().replace(/[:.]/g, "-").replace("T", "_").slice(0, 19);

export function refuseNonEmpty(dir: string, hint = "choose another --out"): void {
  if (statOf(dir)?.isDirectory() === false) throw new HoneError("usage", `${dir} is a file, not a folder; choose another --out`);
  if (taken(dir)) throw new HoneError("usage", `${dir} already exists and is not empty; ${hint}`);
}

/**
 * A folder holds something a run wrote. A start cut short may leave only hone.db.new* (a hone.db being built) and the
 * writer's lock file (`RUN_LOCK_FILE` of store/run-lock.ts, named here so that the CLI's start loads nothing of the
 * store), which a rerun takes over.
 */
const taken = (dir: string) => holdsAnything(dir, (f) => !f.startsWith("hone.db.new") && !f.startsWith("hone.lock"));

/** Whether something is at `dir` that is not a folder, or a folder holding an entry that `counts` (default: any). */
export function holdsAnything(dir: string, counts: (name: string) => boolean = () => true): boolean {
  const st = statOf(dir);
  if (st === undefined) return false;
  try {
    return !st.isDirectory() || readdirSync(dir).some(counts);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false; // removed while looked at
    throw err;
  }
}

/** What is at `path`, or undefined where nothing is (a file on the way to it counts as nothing: making it says why). */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw err;
  }
}

/**
 * The first of `base`, `base-2`, `base-3`, … that holds nothing yet and that `claim` takes (hone run holds the folder
 * it builds the run in): two runs started in the same second get two folders.
 */
export function freeDir(base: string, claim: (dir: string) => boolean = () => true): string {
  for (let n = 1; n <= MAX_NAMES; n++) {
    const d = n === 1 ? base : `${base}-${n}`;
    if (!taken(d) && claim(d)) return d;
  }
  throw new HoneError("usage", `${base}, ${base}-2, … ${base}-${MAX_NAMES} are all taken or held; choose an --out`);
}

/** The most names a search for a free folder tries (runs started in one second, a cluster's array job among them). */
const MAX_NAMES = 10_000;

/**
 * `outDir`, or the folder it links to when it is a symbolic link: `hone run` renames its finished run onto the folder
 * (a rename never replaces a link with one), and a link to nothing, which no folder can be made at, is refused.
 */
export function followed(outDir: string): string {
  let link: boolean | undefined;
  try {
    link = lstatSync(outDir, { throwIfNoEntry: false })?.isSymbolicLink();
  } catch {
    return outDir; // not to be looked at (a file on its path): making the folder says why
  }
  if (!link) return outDir;
  try {
    return realpathSync(outDir);
  } catch {
    throw new HoneError("usage", `${outDir} is a symbolic link to nothing; make the folder it names, or choose another --out`);
  }
}

/** A run's default folder under runs/: `runs/<prefix>-<time>`, made unique with -2, -3, … */
export const defaultRunDir = (prefix: string, claim?: (dir: string) => boolean) =>
  freeDir(join("runs", `${prefix}-${stamp()}`), claim);

/**
 * Removes a folder this process holds (its lock file with it): first renamed away, so that a run that claims the same
 * name meanwhile makes a folder of its own instead of having its files removed with this one's.
 */
export function removeHeld(dir: string): void {
  const gone = `${dir}.rm-${process.pid}`;
  let moved = true;
  try {
    renameSync(dir, gone);
  } catch {
    moved = false; // gone already, or not to be moved: removed where it is
  }
  rmSync(moved ? gone : dir, { recursive: true, force: true });
}

/** Copies a harness package's files into the run directory, so the run is self-contained and replayable. */
export function snapshotHarness(src: string, dest: string): void {
  for (const f of listFiles(src)) {
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    copyFileSync(join(src, f), join(dest, f));
  }
}
