import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HoneError } from "../errors.ts";

/** hone's own folder for warm pools, one per user: `$TMPDIR/hone-<uid>/`, 0700, never a symbolic link. */
function poolBase(): string {
  const base = join(tmpdir(), `hone-${process.getuid?.() ?? "user"}`);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const st = lstatSync(base);
  if (!st.isDirectory() || st.isSymbolicLink() || (process.getuid && st.uid !== process.getuid()))
    throw new HoneError("internal", `${base} is not a folder owned by you; remove it and run again`);
  chmodSync(base, 0o700);
  return base;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Removes the `kind` folders (pool, worker) of hone processes that no longer exist (a kill -9 leaves them behind). */
export function removeStalePools(base = poolBase(), kind = "pool"): void {
  for (const name of readdirSync(base)) {
    const m = /^([a-z]+)-(\d+)-/.exec(name);
    const pid = Number(m?.[2]);
    if (m?.[1] === kind && pid !== process.pid && !alive(pid)) rmSync(join(base, name), { recursive: true, force: true });
  }
}

/** A fresh private folder of this process, `$TMPDIR/hone-<uid>/<kind>-<pid>-…`; dead processes' ones are removed. */
export function privateDir(kind: "pool" | "worker"): string {
  const base = poolBase();
  removeStalePools(base, kind);
  return mkdtempSync(join(base, `${kind}-${process.pid}-`));
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
