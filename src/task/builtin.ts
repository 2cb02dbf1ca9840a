import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HoneError } from "../errors.ts";
import { type DiscoveryTask, loadTaskFolder } from "./discovery-task.ts";
import { loadTaskFolderNeedsFirst } from "./folder-refusal.ts";
import { phasesOf } from "./layouts.ts";
import { checkTaskNeeds } from "./needs.ts";

/** Built-in tasks live in the repository's tasks/ folder, one folder per task. */
export const BUILTIN_TASKS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "tasks");

export function builtinTaskIds(): string[] {
  if (!existsSync(BUILTIN_TASKS_DIR)) return [];
  return readdirSync(BUILTIN_TASKS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(BUILTIN_TASKS_DIR, d.name, "evaluator.py")))
    .map((d) => d.name)
    .sort();
}

export function listBuiltinTasks(): DiscoveryTask[] {
  return builtinTaskIds().map((id) => loadTaskFolder(join(BUILTIN_TASKS_DIR, id), { id }));
}

/** Whether a `--task` value names a folder or a config file rather than an id. */
const isPath = (ref: string) => ref.includes("/") || ref.startsWith(".") || existsSync(ref);

/**
 * A task reference as a run records it: a folder or config file made absolute (its run may be resumed or replayed
 * from another folder), an id as given.
 */
export const recordedTaskRef = (ref: string): string => (isPath(ref) ? resolve(ref) : ref);

/**
 * `--task` takes a path to a task folder (or to a config file inside one), an id from the registry (`--tasks-dir`
 * or HONE_TASKS: a folder of task folders with an optional tasks.yaml or HarnessTTT MANIFEST_eft.json, or such a
 * manifest file), or a built-in id. Before it is handed back, the task is checked for what it needs (Python
 * modules, a GPU) unless `check` is false; a task that cannot run here is refused with exit 4.
 */
export async function resolveTask(
  ref: string,
  tasksDir = process.env.HONE_TASKS,
  opts: { check?: boolean } = {},
): Promise<DiscoveryTask> {
  const task = await findTask(ref, tasksDir);
  if (opts.check !== false) checkTaskNeeds(task);
  return task;
}

async function findTask(ref: string, tasksDir: string | undefined): Promise<DiscoveryTask> {
  if (isPath(ref)) return loadTaskFolderNeedsFirst(ref);
  if (tasksDir) {
    const { readRegistry, loadEntry } = await import("./registry.ts");
    const entry = readRegistry(tasksDir).find((e) => e.id === ref);
    if (entry) return loadEntry(entry);
  }
  if (builtinTaskIds().includes(ref)) return loadTaskFolder(join(BUILTIN_TASKS_DIR, ref), { id: ref });
  const where = tasksDir ? ` and none in ${tasksDir}` : "";
  throw new HoneError(
    "badTask",
    `no built-in task "${ref}"${where} and no folder at that path; \`hone tasks\` lists the built-in tasks (${builtinTaskIds().join(", ")})`,
  );
}

/**
 * `--phase N`: the task reference for a folder's config_phase_N.yaml (OpenEvolve's multi-phase examples). The phase
 * travels inside the reference (a path to that config file), so every record and resumed run keeps it.
 */
export function withPhase(ref: string, phase: number | undefined): string {
  if (phase === undefined) return ref;
  if (!Number.isInteger(phase) || phase < 1) throw new HoneError("usage", "--phase takes a whole number from 1");
  const dir = resolve(ref);
  if (!isPath(ref) || !existsSync(dir) || !statSync(dir).isDirectory())
    throw new HoneError(
      "usage",
      `--phase takes a task folder (got "${ref}"); for a task listed in a tasks.yaml, give its entry phase: ${phase}`,
    );
  const file = ["yaml", "yml"].map((e) => join(dir, `config_phase_${phase}.${e}`)).find(existsSync);
  if (!file) {
    const all = phasesOf(dir);
    throw new HoneError(
      "badTask",
      all.length > 0
        ? `has no config_phase_${phase}.yaml; its phases are ${all.join(", ")}`
        : "has no config_phase_N.yaml files to choose a phase from",
      { file: dir, field: "--phase" },
    );
  }
  return file;
}
