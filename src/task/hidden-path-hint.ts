import { lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, resolve, sep } from "node:path";
import type { DiscoveryTask } from "./discovery-task.ts";

/**
 * What to tell someone whose evaluator could not find a file that is on this machine, beside the task folder but
 * outside it: SimpleTES's ahc039 reads `Path(__file__).parent.parent / "cache"` and says "Input cache not found …
 * Run get_cache.sh first" although the cache is there. The evaluator's sandbox shows the task folder, its
 * python_path and evaluator_read_only, not the folders around it; the hint names the path and the hone.yaml key
 * that shows it. Only paths under the task folder's parent or grandparent are considered (what an upstream
 * evaluator reaches with `..`), and only those whose first folder there the task's own files name (a quoted or
 * slash-delimited `cache` in evaluator.py or its config): the text comes from the evaluator and so from what the
 * program made it say, and the hint goes back to the model, so a path the task does not name is never looked up
 * (no probing whether ~/.ssh/id_rsa exists). Undefined when the text names none that exists.
 */
export function hiddenPathHint(
  task: Pick<DiscoveryTask, "dir" | "pythonPath" | "evaluatorReadOnly" | "evaluatorPath" | "configPath">,
  text: string,
): string | undefined {
  const shown = [task.dir, ...task.pythonPath, ...(task.evaluatorReadOnly ?? [])];
  const near = [dirname(task.dir), dirname(dirname(task.dir))].filter((d) => d !== "/" && d !== dirname(d));
  let named: string | undefined;
  for (const path of absolutePaths(text)) {
    const base = near.find((dir) => within(dir, path));
    if (shown.some((dir) => within(dir, path)) || base === undefined) continue;
    const first = relative(base, path).split(sep)[0] as string;
    named ??= taskOwnText(task);
    // Only the entry the task names is looked up, never deeper and never through a link: what lies inside it, or
    // where a link there points, is not the program's to learn from the hint.
    const entry = join(base, first);
    const kind = namesFolder(named, first) ? entryKind(entry) : undefined;
    if (kind === undefined) continue;
    const folder = kind === "folder" ? entry : dirname(entry);
    return `${entry} exists on this machine, but outside the task folder: the evaluator's sandbox shows only the task folder, its python_path and evaluator_read_only. To let the evaluator read it, add ${relative(task.dir, folder) || "."} to evaluator_read_only: in the task folder's hone.yaml`;
  }
  return undefined;
}

/** A folder or a file (a link is neither: where it points is not looked up); undefined where there is none. */
function entryKind(path: string): "folder" | "file" | undefined {
  try {
    const st = lstatSync(path);
    return st.isDirectory() ? "folder" : st.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

const within = (dir: string, path: string) => {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
};

const OWN_FILES = new Set([".py", ".yaml", ".yml", ".json", ".toml", ".sh", ".cfg", ".ini"]);
const MAX_OWN_FILES = 64;
const MAX_OWN_BYTES = 1 << 20;

/**
 * The text of the task's own files: its evaluator, its config and the code and config files at the task folder's
 * top level (bounded): what the task's author wrote, never what a program wrote.
 */
function taskOwnText(task: Pick<DiscoveryTask, "dir" | "evaluatorPath" | "configPath">): string {
  let names: string[] = [];
  try {
    names = readdirSync(task.dir).filter((n) => OWN_FILES.has(extname(n)));
  } catch {
    // An unreadable folder names nothing of its own; its evaluator and config still may.
  }
  const files = [task.evaluatorPath, task.configPath, ...names.slice(0, MAX_OWN_FILES).map((n) => join(task.dir, n))];
  const texts: string[] = [];
  for (const file of new Set(files)) {
    try {
      if (file && statSync(file).isFile() && statSync(file).size <= MAX_OWN_BYTES) texts.push(readFileSync(file, "utf8"));
    } catch {
      // A file gone or unreadable names nothing.
    }
  }
  return texts.join("\n");
}

/** Whether text names folder as a string literal or a path segment: "cache", '../cache/x', /data/cache. */
function namesFolder(text: string, folder: string): boolean {
  if (folder === "" || folder === "..") return false;
  const name = folder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`["'\`/]${name}(?:["'\`/]|$)`, "m").test(text);
}

/** Absolute paths a message names, quoted or bare, without trailing punctuation; at most 20. */
function absolutePaths(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.slice(0, 20_000).matchAll(/(?:^|[\s'"`(=:])(\/[^\s'"`),:;]+)/g)) {
    const path = resolve((m[1] as string).replace(/[.]+$/, ""));
    found.add(path);
    if (found.size >= 20) break;
  }
  return [...found];
}
