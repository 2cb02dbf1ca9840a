// A run directory's one writer, as the CLI's verbs take it: the store's lock, or an error naming who holds it.
import { HoneError } from "../errors.ts";
import { lockRunDir, type RunLock } from "../store/run-lock.ts";

/**
 * Holds `dir` (which must exist) as its run's one writer until released: a second writer, a `--resume` of a run that
 * is still going or a run started twice at once, is refused before it writes anything. The kernel drops the hold when
 * the process ends, so a killed run can be resumed at once.
 */
export function holdRunDir(dir: string, onNotice?: (text: string) => void): RunLock {
  const lock = lockRunDir(dir);
  if ("release" in lock) {
    if (lock.unguarded)
      onNotice?.(`${dir} is on a file system without locks (${lock.unguarded}): nothing refuses a second writer`);
    return lock;
  }
  const { pid, command } = lock.heldBy;
  const who = pid ? ` (pid ${pid}${command ? `: ${command}` : ""})` : "";
  throw new HoneError(
    "usage",
    `${dir} is being written by another hone process${who}; wait for it to end, or stop it, before resuming the run (or choose another --out)`,
  );
}
