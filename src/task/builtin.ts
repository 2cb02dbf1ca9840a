import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HoneError } from "../errors.ts";
import { type DiscoveryTask, loadTaskFolder } from "./discovery-task.ts";

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

/**
 * `--task` takes a path to a task folder, an id from the registry (`--tasks-dir` or HONE_TASKS: a folder of task
 * folders with an optional tasks.yaml), or a built-in id.
 */
export async function resolveTask(ref: string, tasksDir = process.env.HONE_TASKS): Promise<DiscoveryTask> {
  if (ref.includes("/") || ref.startsWith(".") || existsSync(ref)) return loadTaskFolder(ref);
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
