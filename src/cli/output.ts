import { statSync } from "node:fs";
import { dirname, join } from "node:path";
import { ExitCode, HoneError } from "../errors.ts";
import { ModelError, type ModelFailureKind } from "../model/errors.ts";
import { printableText } from "../printable.ts";

export const isTty = () => Boolean(process.stdout.isTTY);

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A path or word as a POSIX shell reads it back whole: as it is when plain, else single-quoted (for printed commands). */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A fixed-width text table; columns sized to their widest cell. */
export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...cells.slice(1).map(line)].join("\n");
}

export function formatScore(v: number | null | undefined): string {
  if (v === null || v === undefined) return "-";
  return Math.abs(v) >= 1000 ? v.toFixed(2) : v.toPrecision(6);
}

/** Model failures that mean the endpoint itself is wrong: unreachable, key refused, unknown model (exit 6). */
const ENDPOINT_KINDS: ReadonlySet<ModelFailureKind> = new Set([
  "unreachable",
  "unauthorized",
  "unknown_model",
  "no_tool_support",
]);

/** Prints a user-facing error and returns its documented exit code. */
export function reportError(err: unknown): number {
  if (err instanceof HoneError) {
    process.stderr.write(`hone: ${printableText(err.message)}\n`);
    return ExitCode[err.exit];
  }
  if (err instanceof ModelError) {
    // A model call that failed where no run code turned it into a HoneError (a proposer's --cache replay miss, say):
    // the endpoint's fault (6) or the run's (7), as the README's table says, never "a bug".
    process.stderr.write(`hone: ${printableText(err.message)}\n`);
    return ENDPOINT_KINDS.has(err.kind) ? ExitCode.endpoint : ExitCode.runFailed;
  }
  const place = unwritable(err);
  if (place) {
    process.stderr.write(`hone: ${printableText(place.message)}\n`);
    return ExitCode[place.exit];
  }
  const e = err as Error;
  process.stderr.write(`hone: internal error: ${printableText(e?.stack ?? String(err))}\n`);
  return ExitCode.internal;
}

/**
 * Reads a run's records with `read`. A hone.db that SQLite cannot read (damaged, truncated, not a database) or whose
 * stored settings are not JSON is the user's to know about, naming the file (exit 2, as `hone replay` refuses one),
 * never "an internal error".
 */
export async function readRunRecords<T>(dir: string, read: () => T | Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    const e = err as { code?: unknown; message?: string };
    // Damage only (a lock or an I/O error is not the records' fault and keeps its own message)
    const sqlite = typeof e.code === "string" && /^SQLITE_(NOTADB|CORRUPT|ERROR)/.test(e.code);
    if (!sqlite && !(err instanceof SyntaxError)) throw err;
    throw new HoneError(
      "usage",
      `${join(dir, "hone.db")} is not a readable hone run database (${String(e.message).slice(0, 120)}); the run's records are damaged`,
    );
  }
}

/** Codes of a place the file system will not let hone write: the user's to change (a folder given on the command line). */
const REFUSED: Readonly<Record<string, string>> = {
  EACCES: "permission denied",
  EPERM: "not permitted",
  EROFS: "a read-only file system",
  ENOTDIR: "a part of the path is a file, not a folder",
  ENAMETOOLONG: "the name is too long",
};
/** Codes of a file system that ran out of room: the run's failure (exit 7), not a bug. */
const FULL: Readonly<Record<string, string>> = { ENOSPC: "no space left on the device", EDQUOT: "the disk quota is used up" };
/** Why mkdir said ENOENT of a folder whose parent is there: its file system (procfs) holds no folder of ours. */
const noFolderThere = (path: string) =>
  statSync(dirname(path), { throwIfNoEntry: false })?.isDirectory()
    ? "this file system does not allow a folder there"
    : undefined;
/** Why mkdir said EEXIST: something other than a folder is at the path (a folder there is no place refused). */
const notAFolder = (path: string) =>
  statSync(path, { throwIfNoEntry: false })?.isDirectory() === false ? "a file is there, not a folder" : undefined;
/** Calls that write: an error of one of these names a place hone was told, or chose, to write. */
const WRITES = new Set(["mkdir", "open", "write", "rename", "unlink", "rmdir", "copyfile", "symlink", "link", "utime"]);
/** Calls that only read: an error of one of these names a file hone was given to read. */
const READS = new Set(["read"]);
/** Whether anything is at `path` (a file, a folder, a link): false where it is missing or cannot be looked at. */
const present = (path: string) => {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
};
/**
 * Whether a failed call was a read: `read` always; `open` of something that is there (its flags are not in the error,
 * but an open that fails on a missing path can only have been one that creates it, a write).
 */
const wasRead = (syscall: string, path: string | undefined) =>
  READS.has(syscall) || (syscall === "open" && path !== undefined && present(path));

/**
 * A file-system error where hone writes (an --out, a data or cache folder, `hone init`'s folder), said as the user
 * reads it, naming the path: exit 2 for a place that cannot be written, 7 for a full disk. A folder under /proc
 * answers mkdir with ENOENT although its parent exists (mkdir-guard.ts): that too is a place that cannot be written.
 * A file that is there and cannot be opened (or read) is exit 2 too, its advice its permissions, not another folder.
 */
function unwritable(err: unknown): HoneError | undefined {
  const e = err as NodeJS.ErrnoException | undefined;
  if (!(e instanceof Error) || typeof e.code !== "string" || typeof e.syscall !== "string") return undefined;
  if (!WRITES.has(e.syscall) && !READS.has(e.syscall)) return undefined;
  const where = typeof e.path === "string" ? e.path : "a file";
  const full = FULL[e.code];
  if (full)
    return new HoneError("runFailed", `${where} cannot be written (${e.code}: ${full}); free some space and run it again`);
  const refused =
    e.syscall !== "mkdir"
      ? REFUSED[e.code]
      : e.code === "ENOENT"
        ? noFolderThere(where)
        : e.code === "EEXIST"
          ? notAFolder(where)
          : REFUSED[e.code];
  if (!refused) return undefined;
  // A file hone reads (an input, or one it opens to update) is the user's to make readable; another folder is no help.
  if (wasRead(e.syscall, typeof e.path === "string" ? e.path : undefined)) {
    const verb = e.syscall === "open" ? "cannot be opened" : "cannot be read";
    return new HoneError("usage", `${where} ${verb} (${e.code}: ${refused}); check its permissions`);
  }
  return new HoneError(
    "usage",
    `${where} cannot be written (${e.code}: ${refused}); check its permissions, or choose a folder you can write`,
  );
}
