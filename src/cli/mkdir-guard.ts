// Node's recursive mkdirSync never returns where a folder's parent exists but cannot hold it and says ENOENT (procfs:
// `hone run --out /proc/x` spun at 100% CPU, deaf to Ctrl-C, since Node took the ENOENT for a missing parent, made
// the parent (EEXIST) and tried again, forever). The CLI replaces it, before any verb runs, with the same walk
// bounded: each missing parent is made once, then the folder once more, and that second error is the answer.
// Its limit: only fs.mkdirSync is replaced. fs.mkdir and fs.promises.mkdir with `recursive` loop the same way under
// /proc, and Node's cpSync calls its own reference to mkdirSync. hone uses no async mkdir and copies with cpSync only
// into folders it has already made; code that makes a folder the user named must keep to fs.mkdirSync (or makeDirs).
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { dirname } from "node:path";

type MkdirOptions = fs.MakeDirectoryOptions | fs.Mode | null | undefined;

const original = fs.mkdirSync as (path: fs.PathLike, options?: MkdirOptions) => string | undefined;

const isDir = (path: string) => fs.statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;

/** `mkdir -p` as Node's recursive mkdirSync does it (the first folder made, or undefined), never looping. */
export function makeDirs(path: string, mode?: fs.Mode): string | undefined {
  try {
    original(path, { mode });
    return path;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST" && isDir(path)) return undefined;
    if (code !== "ENOENT" || dirname(path) === path) throw err;
  }
  const first = makeDirs(dirname(path), mode);
  try {
    original(path, { mode });
  } catch (err) {
    // Made meanwhile by another process: there, as asked. Anything else (ENOENT again: procfs) is final.
    if ((err as NodeJS.ErrnoException).code !== "EEXIST" || !isDir(path)) throw err;
  }
  return first ?? path;
}

function guardedMkdirSync(path: fs.PathLike, options?: MkdirOptions): string | undefined {
  if (typeof options !== "object" || options === null || !options.recursive || typeof path !== "string")
    return original(path, options);
  return makeDirs(path, options.mode);
}

/** Puts the bounded walk in place of fs.mkdirSync for every module, named ESM imports included. */
export function installMkdirGuard(): void {
  if (fs.mkdirSync === (guardedMkdirSync as typeof fs.mkdirSync)) return;
  fs.mkdirSync = guardedMkdirSync as typeof fs.mkdirSync;
  syncBuiltinESMExports();
}
