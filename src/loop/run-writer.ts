// A run directory's one writer, as the CLI's verbs take it: the store's lock, or an error naming who holds it.
import { HoneError } from "../errors.ts";
import { type LockHolder, lockRunDir, RUN_LOCK_FILE, type RunLock } from "../store/run-lock.ts";

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

/** Why `dir` cannot be written now: who holds it, and what to do (`advice`, after "wait for it to end, or stop it,"). */
export function heldMessage(dir: string, { pid, command }: LockHolder, advice: string): string {
  if (!pid)
    return `${dir} is locked by a process this machine cannot name (one on another machine, or a file system that refuses locks); wait for it to end, or, if no other hone process writes this run, set ${NO_LOCK}=off`;
  return `${dir} is being written by another hone process (pid ${pid}${command ? `: ${command}` : ""}); wait for it to end, or stop it, ${advice}`;
}

/** The environment variable that turns the lock off, for a file system whose locks refuse every process. */
export const NO_LOCK = "HONE_RUN_LOCK";
