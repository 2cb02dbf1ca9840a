import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { type DiscoveryTask, type LoadOptions, loadTaskFolder, splitRef } from "./discovery-task.ts";
import { detectLayout } from "./layouts.ts";
import { type NeedsSubject, needsRefusal, taskNeeds } from "./needs.ts";
import { parseTaskYaml } from "./upstream-yaml.ts";

/**
 * Loads a task folder; when it cannot be loaded, what it needs that this machine lacks (torch, a GPU: needs.ts) is
 * said first, and the folder's own problem after it. Fixing a missing description is no use to someone without the
 * GPU the task needs, and the needs are what decide whether the folder can run here at all.
 */
export function loadTaskFolderNeedsFirst(ref: string, opts: LoadOptions = {}): DiscoveryTask {
  try {
    return loadTaskFolder(ref, opts);
  } catch (err) {
    if (!(err instanceof HoneError) || err.exit !== "badTask") throw err;
    throw needsFirst(ref, opts, err) ?? err;
  }
}

function needsFirst(ref: string, opts: LoadOptions, problem: HoneError): HoneError | undefined {
  try {
    const subject = subjectOf(ref, opts);
    const refusal = needsRefusal(subject, taskNeeds(subject));
    return refusal && new HoneError("badTask", `${refusal.message}\nThen, too: ${problem.message}`);
  } catch {
    return undefined; // not even its seed and evaluator are found: the folder's own problem is all there is to say
  }
}

/** What the needs check reads of a folder that does not load: its seed, evaluator and hone.yaml's interpreter. */
function subjectOf(ref: string, opts: LoadOptions): NeedsSubject {
  const { dir, config } = splitRef(ref);
  const layout = detectLayout(dir, { ...opts, config: opts.config ?? config });
  const hone = looseHoneYaml(join(dir, "hone.yaml"));
  const python = typeof hone.python === "string" ? hone.python : "python3";
  const pythonPath = Array.isArray(hone.python_path) ? hone.python_path.filter((p) => typeof p === "string") : [];
  return {
    id: opts.id ?? basename(dir),
    dir,
    evaluatorPath: layout.evaluatorPath,
    seedPath: layout.seedPath,
    python: python.includes("/") ? resolve(dir, python) : python,
    pythonPath: pythonPath.map((p) => resolve(dir, p)),
  };
}

/** hone.yaml read without its schema (the folder's own error is reported after the needs). */
function looseHoneYaml(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  try {
    const raw = parseTaskYaml(readFileSync(path, "utf8"));
    return raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
