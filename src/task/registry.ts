import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { HoneError, taskError, zodIssues } from "../errors.ts";
import { BUILTIN_TASKS_DIR } from "./builtin.ts";
import { type DiscoveryTask, loadTaskFolder } from "./discovery-task.ts";

/** tasks.yaml: a lab's own suite. Each entry may override what the task folder's hone.yaml says. */
export const manifestSchema = z
  .object({
    tasks: z.array(
      z
        .object({
          id: z.string().regex(/^[a-z0-9][a-z0-9-]{1,63}$/, "use 2-64 lowercase letters, digits and hyphens"),
          path: z.string().min(1),
          direction: z.enum(["maximize", "minimize"]).optional(),
          metric: z.string().min(1).optional(),
          domain: z.string().optional(),
          dependencies: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/, "a Python module name")).default([]),
          timeout: z.number().positive().max(86_400).optional(),
          python: z.string().min(1).optional(),
          python_path: z.array(z.string()).default([]),
          env: z.record(z.string(), z.string()).default({}),
          max_evals: z.number().int().min(1).optional(),
        })
        .strict(),
    ),
  })
  .strict();
type ManifestEntry = z.infer<typeof manifestSchema>["tasks"][number];

export interface RegistryEntry {
  id: string;
  dir: string;
  builtin: boolean;
  manifest?: ManifestEntry & { file: string };
}

/** Reads a folder of task folders and its optional tasks.yaml. */
export function readRegistry(dirArg: string): RegistryEntry[] {
  const dir = resolve(dirArg);
  if (!existsSync(dir)) throw new HoneError("badTask", `${dir}: the tasks folder does not exist`);
  const manifestFile = join(dir, "tasks.yaml");
  const entries = new Map<string, RegistryEntry>();
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory() && existsSync(join(dir, d.name, "evaluator.py")))
      entries.set(d.name, { id: d.name, dir: join(dir, d.name), builtin: dir === BUILTIN_TASKS_DIR });
  }
  if (existsSync(manifestFile)) {
    let raw: unknown;
    try {
      raw = parseYaml(readFileSync(manifestFile, "utf8"));
    } catch (err) {
      throw taskError(manifestFile, undefined, `is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
    }
    const r = manifestSchema.safeParse(raw ?? {});
    if (!r.success) {
      const first = zodIssues(r.error.issues)[0];
      throw taskError(manifestFile, first?.field, first?.message ?? "invalid");
    }
    r.data.tasks.forEach((t, i) => {
      const path = resolve(dir, t.path);
      if (!existsSync(join(path, "evaluator.py")))
        throw taskError(manifestFile, `tasks.${i}.path`, `${t.path} is not a task folder (no evaluator.py there)`);
      if ([...entries.values()].some((e) => e.manifest && e.id === t.id))
        throw taskError(manifestFile, `tasks.${i}.id`, `"${t.id}" is listed twice`);
      for (const [k, e] of entries) if (e.dir === path) entries.delete(k);
      entries.set(t.id, { id: t.id, dir: path, builtin: false, manifest: { ...t, file: manifestFile } });
    });
  }
  return [...entries.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** Loads a registry entry into a task, applying its manifest overrides and checking its Python dependencies. */
export function loadEntry(e: RegistryEntry): DiscoveryTask {
  const task = loadTaskFolder(e.dir, { id: e.id });
  const m = e.manifest;
  if (!m) return task;
  const merged: DiscoveryTask = {
    ...task,
    direction: m.direction ?? task.direction,
    metric: m.metric ?? task.metric,
    domain: m.domain ?? task.domain,
    timeoutSec: m.timeout ?? task.timeoutSec,
    python: m.python?.includes("/") ? resolve(join(m.file, ".."), m.python) : (m.python ?? task.python),
    pythonPath: [...task.pythonPath, ...m.python_path.map((p) => resolve(join(m.file, ".."), p))],
    env: { ...task.env, ...m.env },
    budget: { maxEvals: m.max_evals ?? task.budget.maxEvals },
  };
  if (m.dependencies.length > 0) checkDependencies(merged, m.dependencies, m.file);
  return merged;
}

function checkDependencies(task: DiscoveryTask, modules: string[], file: string): void {
  const code = `import importlib, sys\nmissing = [m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]\nprint(",".join(missing))`;
  let missing = "";
  try {
    missing = execFileSync(task.python, ["-c", code, ...modules], { encoding: "utf8", timeout: 30_000 }).trim();
  } catch {
    throw taskError(file, "python", `cannot run ${task.python} to check the dependencies of ${task.id}`);
  }
  if (missing)
    throw taskError(file, "dependencies", `task ${task.id} needs Python modules that ${task.python} cannot import: ${missing}`);
}
