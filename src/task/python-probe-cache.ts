// What hone learned about an interpreter, kept on disk between processes: probing a `python3` that is a pyenv shim
// costs a shell and a Python start (most of a run's set-up), while the answer changes only when the installation
// does. An entry is keyed by the interpreter's name, the environment the probe ran in and hone's version, and holds
// the real executable's size and modification time (a replaced interpreter misses) and its folders' modification
// times (a package installed or removed there shows: python-env.ts then probes afresh). What the key cannot see (a
// shim switched to another version) python-env.ts reads without running Python where it can, and otherwise confirms
// with a fresh probe.
import { createHash } from "node:crypto";
import { readFileSync, rmSync, type Stats, statSync } from "node:fs";
import { join } from "node:path";
import { HONE_VERSION } from "../measure/identity.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { honeCacheDir } from "../store/cache-dir.ts";

/** What the probe prints, before python-env.ts turns it into a PythonInfo. */
export interface ProbeOutput {
  executable: string;
  roots: string[];
  isolation: Record<string, unknown>;
}

const MAX_ENTRY_BYTES = 256 * 1024;

/** The entry's file for an interpreter name as the probe runs it (PATH and HOME are all it is given). */
export function probeCacheFile(python: string, env: NodeJS.ProcessEnv = process.env): string {
  const key = JSON.stringify([python, env.PATH ?? "", env.HOME ?? "", HONE_VERSION]);
  return join(honeCacheDir(env), "python", `${createHash("sha256").update(key).digest("hex").slice(0, 32)}.json`);
}

const stamp = (file: string) => {
  const s = statSync(file, { throwIfNoEntry: false });
  return s?.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : undefined;
};

const isProbe = (v: unknown): v is ProbeOutput => {
  const p = v as Partial<ProbeOutput> | null;
  return (
    typeof p?.executable === "string" &&
    p.executable.startsWith("/") &&
    Array.isArray(p.roots) &&
    p.roots.every((r) => typeof r === "string") &&
    typeof p.isolation === "object" &&
    p.isolation !== null
  );
};

/**
 * The cached probe of `python`, when its entry is whole and its executable is still the file it was, and whether the
 * interpreter's folders are as they were when it was probed (read from one reading of the entry).
 */
export function readCachedEntry(python: string): { probe: ProbeOutput; foldersHold: boolean } | undefined {
  const file = probeCacheFile(python);
  try {
    if ((statSync(file, { throwIfNoEntry: false })?.size ?? Number.POSITIVE_INFINITY) > MAX_ENTRY_BYTES) return undefined;
    const entry = JSON.parse(readFileSync(file, "utf8")) as {
      probe?: unknown;
      size?: unknown;
      mtimeMs?: unknown;
      folders?: unknown;
    };
    if (!isProbe(entry.probe)) return undefined;
    const now = stamp(entry.probe.executable);
    if (!now || now.size !== entry.size || now.mtimeMs !== entry.mtimeMs) return undefined;
    const foldersHold = JSON.stringify(folderStamps(entry.probe.roots)) === JSON.stringify(entry.folders);
    return { probe: entry.probe, foldersHold };
  } catch {
    return undefined;
  }
}

/** The cached probe of `python` (readCachedEntry), whatever its folders' times. */
export const readCachedProbe = (python: string): ProbeOutput | undefined => readCachedEntry(python)?.probe;

/** The modification times of an interpreter's folders (those that exist), as an entry keeps them. */
function folderStamps(roots: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of roots) {
    const s = statOf(r);
    if (s?.isDirectory()) out[r] = s.mtimeMs;
  }
  return out;
}

/** A path's stat, or undefined when it cannot be had (absent, a file in the way, no permission). */
function statOf(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** Keeps a fresh probe of `python` for the next process (a cache that cannot be written is only slower). */
export function writeCachedProbe(python: string, probe: ProbeOutput): void {
  const now = stamp(probe.executable);
  if (!now) return;
  try {
    writeJsonAtomic(probeCacheFile(python), { python, probe, ...now, folders: folderStamps(probe.roots) });
  } catch {
    // read-only home or full disk: every process probes afresh
  }
}

export function dropCachedProbe(python: string): void {
  rmSync(probeCacheFile(python), { force: true });
}
