import { closeSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
import { join, relative, sep } from "node:path";

// The task's data files a generated Python tool may read (HarnessTTT's list_task_inputs / read_input_sample): .csv,
// .txt and .json files under the task folder whose path names no evaluator, answer, ground truth, expected output or
// solution, and no hidden or linked file; at most 50, and at most 5,000 lines of each.

const SUFFIXES = [".csv", ".txt", ".json"];
const BLOCKED = ["evaluator", "answer", "ground_truth", "expected", "solution"];
export const MAX_INPUTS = 50;
export const MAX_SAMPLE_LINES = 5000;
/** The most bytes one read_input_sample reads (and returns) from a file. */
export const MAX_SAMPLE_BYTES = 256 * 1024;
const MAX_VISITED = 5000;
const MAX_DEPTH = 6;
export const NOT_ALLOWED = "ERROR: path not allowed or missing";

const allowedName = (rel: string) =>
  SUFFIXES.some((s) => rel.toLowerCase().endsWith(s)) && !BLOCKED.some((b) => rel.toLowerCase().includes(b));

/** The readable inputs of the task folder `dir`, as sorted relative paths (bounded walk: depth, entries, count). */
export function listTaskInputs(dir: string): string[] {
  const out: string[] = [];
  let visited = 0;
  const walk = (d: string, depth: number) => {
    if (depth > MAX_DEPTH) return;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (++visited > MAX_VISITED) return;
      if (e.name.startsWith(".") || e.name === "__pycache__") continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (e.isFile()) {
        const rel = relative(dir, p).split(sep).join("/");
        if (allowedName(rel)) out.push(rel);
      }
    }
  };
  walk(dir, 0);
  return out.sort().slice(0, MAX_INPUTS);
}

/**
 * The first `nrows` lines (at most MAX_SAMPLE_LINES, and MAX_SAMPLE_BYTES) of one listed input, or NOT_ALLOWED for
 * anything not listed, a file that is no longer a plain file inside the folder, or text that holds a task secret.
 */
export function readInputSample(
  dir: string,
  listed: readonly string[],
  name: unknown,
  nrows: unknown,
  secrets: readonly string[],
): string {
  if (typeof name !== "string" || !listed.includes(name)) return NOT_ALLOWED;
  const file = join(dir, name);
  let fd: number | undefined;
  try {
    if (!lstatSync(file).isFile() || !realpathSync(file).startsWith(realpathSync(dir) + sep)) return NOT_ALLOWED;
    fd = openSync(file, "r");
    const buf = Buffer.alloc(MAX_SAMPLE_BYTES);
    const n = readSync(fd, buf, 0, MAX_SAMPLE_BYTES, 0);
    const text = buf.subarray(0, n).toString("utf8");
    const rows = Math.max(0, Math.min(MAX_SAMPLE_LINES, Number.isInteger(nrows) ? (nrows as number) : 1000));
    let end = 0;
    for (let i = 0; i < rows && end < text.length; i++) {
      const nl = text.indexOf("\n", end);
      end = nl < 0 ? text.length : nl + 1;
    }
    const sample = text.slice(0, end);
    return secrets.some((s) => s.length >= 8 && sample.includes(s)) ? NOT_ALLOWED : sample;
  } catch {
    return NOT_ALLOWED;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
