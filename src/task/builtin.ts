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

/** `--task` takes a built-in id or a path to a task folder. */
export function resolveTask(ref: string): DiscoveryTask {
  if (ref.includes("/") || ref.startsWith(".") || existsSync(ref)) return loadTaskFolder(ref);
  if (builtinTaskIds().includes(ref)) return loadTaskFolder(join(BUILTIN_TASKS_DIR, ref), { id: ref });
  throw new HoneError(
    "badTask",
    `no built-in task "${ref}" and no folder at that path; \`hone tasks\` lists the built-in tasks (${builtinTaskIds().join(", ")})`,
  );
}
