// A task's content hash: what its evaluations are recorded under (replay refuses a task whose hash changed) and what
// its measurement identity names. Everything an evaluation can read or be configured by goes in: the task folder's
// files (a file reached through a symbolic link by the bytes it reads as), the folders on its python_path, a seed or
// evaluator a manifest names outside the folder, and what a tasks.yaml entry overrides. A folder with none of these
// hashes as it always did (sha256 over each file's path and bytes).

import { createHash, type Hash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { canonicalJson } from "../canonical-json.ts";
import { taskError } from "../errors.ts";
import type { DiscoveryTask } from "./discovery-task.ts";

/** Folders never hashed (as harness packages leave them out). */
const SKIPPED = new Set([".git", "node_modules"]);

type Entry = { path: string; file: string } | { path: string; marker: string };

/**
 * What is read of content outside the folder's own files (reached through links, or a python_path folder outside
 * it), for one task: a large dataset is hashed by its files' sizes and times past the first GiB; a link to a whole
 * tree (`/`) stops after LINKED_FILES files, and a python_path folder holding more is refused; never the kernel's
 * own files.
 */
const LINKED_BYTES = 1 << 30;
const LINKED_FILES = 100_000;
const SPECIAL = ["/proc", "/sys", "/dev"];

/** What remains to be read of a task's outside content (one budget for every link and python_path folder). */
interface Budget {
  bytes: number;
  files: number;
}
const fullBudget = (): Budget => ({ bytes: LINKED_BYTES, files: LINKED_FILES });

/** A budgeted file: its bytes while the budget lasts, then its size and time. */
function budgeted(budget: Budget, path: string, abs: string, size: number): Entry {
  if (size > budget.bytes) return { path, marker: `size ${size} modified ${statSync(abs).mtimeMs}` };
  budget.bytes -= size;
  return { path, file: abs };
}

/**
 * Every file under `root` as the evaluator reads it, links followed (a link cycle is walked once), sorted by path.
 * Files reached through links count against `budget`; with `whole`, every file does (a python_path folder), and
 * `overFiles` is called instead of cutting the walk short when the budget's file count runs out.
 */
function entries(
  root: string,
  o: { skip?: Set<string>; budget?: Budget; whole?: boolean; overFiles?: () => never } = {},
): { list: Entry[]; linked: boolean } {
  const skip = o.skip ?? SKIPPED;
  const budget = o.budget ?? fullBudget();
  const list: Entry[] = [];
  let linked = false;
  const linkedFile = (path: string, abs: string) => {
    if (budget.files > 0) {
      budget.files--;
      list.push(budgeted(budget, path, abs, statSync(abs).size));
    } else {
      o.overFiles?.();
      if (budget.files === 0) list.push({ path, marker: `more than ${LINKED_FILES} files through links, the rest not hashed` });
      budget.files = -1; // said once
    }
  };
  const walk = (dir: string, rel: string, seen: Set<string>, viaLink: boolean) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (skip.has(e.name)) continue;
      const abs = join(dir, e.name);
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(abs, path, seen, viaLink);
      else if (e.isFile()) viaLink ? linkedFile(path, abs) : list.push({ path, file: abs });
      else if (e.isSymbolicLink()) {
        linked = true;
        const real = existsSync(abs) ? realpathSync(abs) : undefined;
        const target = real ? statSync(real) : undefined;
        if (!real || !target) list.push({ path, marker: `link to nothing: ${readlinkSync(abs)}` });
        else if (SPECIAL.some((s) => real === s || real.startsWith(`${s}/`))) list.push({ path, marker: `link to ${real}` });
        else if (target.isFile()) linkedFile(path, real);
        else if (target.isDirectory() && !seen.has(real)) walk(abs, path, new Set([...seen, real]), true);
      }
    }
  };
  walk(root, "", new Set([realpathSync(root)]), o.whole === true);
  list.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { list, linked };
}

function hashEntries(h: Hash, list: Entry[]): void {
  for (const e of list) {
    h.update(e.path).update("\0");
    if ("file" in e) h.update(readFileSync(e.file)).update("\0");
    else h.update(`\0${e.marker}\0`);
  }
}

const inside = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);

/**
 * sha256 over a folder's or a file's content within `budget`, or a marker for a path that is not there. A folder
 * holding more files than the budget allows is refused by `overFiles` (its content could change unseen).
 */
function hashPath(path: string, budget: Budget, overFiles: () => never): string {
  if (!existsSync(path)) return "missing";
  const h = createHash("sha256");
  const st = statSync(path);
  if (st.isDirectory())
    hashEntries(h, entries(path, { skip: new Set([...SKIPPED, "__pycache__"]), budget, whole: true, overFiles }).list);
  else {
    const e = budgeted(budget, "", path, st.size);
    h.update("file" in e ? readFileSync(path) : `\0${e.marker}\0`);
  }
  return h.digest("hex");
}

export type HashedTask = Pick<DiscoveryTask, "dir" | "pythonPath" | "seedPath" | "evaluatorPath" | "manifestOverrides">;

/** A python_path folder with more files than the hash reads: refused, naming the entry, the cap and what to do. */
const tooManyFiles = (task: HashedTask, what: string, p: string) => (): never => {
  throw taskError(
    p,
    what,
    `holds more than ${LINKED_FILES} files (with the task's linked content): hone hashes every file on a task's python_path, since what the evaluator imports can change its scores, and reads at most ${LINKED_FILES} files a task. Put only the modules the evaluator imports on python_path (not a whole virtualenv or site-packages: run the task with that environment's interpreter instead, \`python: path/to/venv/bin/python\`), for the task in ${task.dir}`,
  );
};

/** What the task's evaluations depend on outside its folder's own files, one line each; empty for a plain folder. */
function outside(task: HashedTask, budget: Budget): string[] {
  const out: string[] = [];
  // Each python_path folder by its place on the path and its content, not by where it is on this machine.
  for (const [i, p] of (task.pythonPath ?? []).entries())
    if (!inside(p, task.dir)) out.push(`python_path[${i}]=${hashPath(p, budget, tooManyFiles(task, `python_path[${i}]`, p))}`);
  for (const [what, p] of [
    ["seed", task.seedPath],
    ["evaluator", task.evaluatorPath],
  ] as const)
    if (p && !inside(p, task.dir)) out.push(`${what}=${hashPath(p, budget, tooManyFiles(task, what, p))}`);
  if (task.manifestOverrides && Object.keys(task.manifestOverrides).length > 0)
    out.push(`overrides=${canonicalJson(task.manifestOverrides)}`);
  return out;
}

/**
 * The task's content hash (64 hex digits). A folder with no links, nothing on python_path outside it and no manifest
 * overrides hashes exactly as `contentHash(task.dir)` (harness/files.ts) did.
 */
export function taskContentHash(task: HashedTask): string {
  const budget = fullBudget();
  const { list, linked } = entries(task.dir, { budget });
  const h = createHash("sha256");
  hashEntries(h, list);
  const folder = h.digest("hex");
  const extra = outside(task, budget);
  if (!linked && extra.length === 0) return folder;
  return createHash("sha256")
    .update(`hone-task-content-2\0${folder}\0${extra.join("\0")}`)
    .digest("hex");
}

/** The relative form of an override's path (a manifest moved with its tasks keeps its hash). */
export const relativeTo = (from: string, p: string) => relative(from, p).split(sep).join("/");
