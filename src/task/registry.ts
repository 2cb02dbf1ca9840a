import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as z from "zod";
import { HoneError, taskError, zodIssues } from "../errors.ts";
import { yamlProblem } from "../yaml-depth.ts";
import { BUILTIN_TASKS_DIR } from "./builtin.ts";
import { relativeTo } from "./content-hash.ts";
import { type DiscoveryTask, type LoadOptions, loadTaskFolder } from "./discovery-task.ts";
import { HARNESSTTT_MANIFEST, type ManifestTask, readHarnessManifest } from "./harnessttt-manifest.ts";
import { looksLikeTaskFolder } from "./layouts.ts";
import { parseTaskYaml } from "./upstream-yaml.ts";

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
          phase: z.number().int().min(1).max(999).optional(),
        })
        .strict(),
    ),
  })
  .strict();
type ManifestEntry = z.infer<typeof manifestSchema>["tasks"][number];

/** What a manifest entry changes about its task folder, whichever manifest format it came from. */
export interface EntryOverrides {
  file: string;
  direction?: ManifestEntry["direction"];
  metric?: string;
  domain?: string;
  dependencies: string[];
  timeout?: number;
  python?: string;
  /** Absolute folders. */
  pythonPath: string[];
  env: Record<string, string>;
  maxEvals?: number;
  /** Which files of the folder to load (a config or phase, a seed or evaluator the manifest names). */
  load: LoadOptions;
  declaredNeeds?: string[];
}

export interface RegistryEntry {
  id: string;
  dir: string;
  builtin: boolean;
  manifest?: EntryOverrides;
}

function readTasksYaml(file: string): RegistryEntry[] {
  let raw: unknown;
  try {
    raw = parseTaskYaml(readFileSync(file, "utf8"));
  } catch (err) {
    throw taskError(file, undefined, yamlProblem(err));
  }
  const r = manifestSchema.safeParse(raw ?? {});
  if (!r.success) {
    const first = zodIssues(r.error.issues)[0];
    throw taskError(file, first?.field, first?.message ?? "invalid");
  }
  const root = dirname(file);
  return r.data.tasks.map((t, i) => {
    const path = resolve(root, t.path);
    // `path` may name a config file inside the folder (a phase of an OpenEvolve example, say).
    const config = /\.ya?ml$/.test(path) && existsSync(path) && statSync(path).isFile() ? path : undefined;
    const dir = config ? dirname(path) : path;
    if (!looksLikeTaskFolder(dir))
      throw taskError(file, `tasks.${i}.path`, `${t.path} is not a task folder (no seed program and evaluator there)`);
    const manifest: EntryOverrides = {
      file,
      direction: t.direction,
      metric: t.metric,
      domain: t.domain,
      dependencies: t.dependencies,
      timeout: t.timeout,
      python: t.python,
      pythonPath: t.python_path.map((p) => resolve(root, p)),
      env: t.env,
      maxEvals: t.max_evals,
      load: { config, phase: t.phase },
    };
    return { id: t.id, dir, builtin: false, manifest };
  });
}

function fromHarnessManifest(file: string): RegistryEntry[] {
  return readHarnessManifest(file).map((t: ManifestTask, i) => {
    if (!looksLikeTaskFolder(t.dir) && !(t.seed && t.evaluator))
      throw taskError(file, `tasks.${i}.rel_path`, `${t.dir} is not a task folder (no seed program and evaluator there)`);
    const manifest: EntryOverrides = {
      file,
      domain: t.domain,
      dependencies: [],
      timeout: t.timeout,
      python: t.python,
      pythonPath: t.pythonPath,
      env: t.env,
      // HarnessTTT's loader: the config's evaluator.timeout, else 360 s.
      load: { seed: t.seed, evaluator: t.evaluator, defaultTimeoutSec: 360 },
      declaredNeeds: t.declared,
    };
    return { id: t.id, dir: t.dir, builtin: false, manifest };
  });
}

function addListed(entries: Map<string, RegistryEntry>, listed: RegistryEntry[]): void {
  const fromManifests = new Set([...entries.values()].filter((e) => e.manifest).map((e) => e.id));
  for (const e of listed) {
    if (fromManifests.has(e.id))
      throw taskError(e.manifest?.file ?? e.dir, "id", `"${e.id}" is listed twice (ids must be unique across manifests)`);
    fromManifests.add(e.id);
    for (const [k, other] of entries) if (!other.manifest && other.dir === e.dir) entries.delete(k);
    entries.set(e.id, e);
  }
}

/**
 * Reads a folder of task folders with its optional tasks.yaml and HarnessTTT MANIFEST_eft.json, or one manifest
 * file in either format (`--tasks-dir path/to/MANIFEST_eft.json`).
 */
export function readRegistry(dirArg: string): RegistryEntry[] {
  const dir = resolve(dirArg);
  if (!existsSync(dir)) throw new HoneError("badTask", `${dir}: the tasks folder does not exist`);
  const entries = new Map<string, RegistryEntry>();
  if (statSync(dir).isFile()) {
    addListed(entries, dir.endsWith(".json") ? fromHarnessManifest(dir) : readTasksYaml(dir));
    return [...entries.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    if (d.isDirectory() && looksLikeTaskFolder(join(dir, d.name)))
      entries.set(d.name, { id: d.name, dir: join(dir, d.name), builtin: dir === BUILTIN_TASKS_DIR });
  }
  if (existsSync(join(dir, "tasks.yaml"))) addListed(entries, readTasksYaml(join(dir, "tasks.yaml")));
  if (existsSync(join(dir, HARNESSTTT_MANIFEST))) addListed(entries, fromHarnessManifest(join(dir, HARNESSTTT_MANIFEST)));
  return [...entries.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** Loads a registry entry into a task, applying its manifest overrides and checking its declared Python modules. */
export function loadEntry(e: RegistryEntry): DiscoveryTask {
  const m = e.manifest;
  const task = loadTaskFolder(e.dir, { id: e.id, ...m?.load, pythonPath: m?.pythonPath });
  if (!m) return task;
  const merged: DiscoveryTask = {
    ...task,
    direction: m.direction ?? task.direction,
    metric: m.metric ?? task.metric,
    // A metric the manifest names is hone's contract: the evaluator must return it.
    metricFallback: m.metric ? { rule: "none", exclude: [] } : task.metricFallback,
    domain: m.domain ?? task.domain,
    timeoutSec: m.timeout ?? task.timeoutSec,
    python: m.python?.includes("/") ? resolve(join(m.file, ".."), m.python) : (m.python ?? task.python),
    pythonPath: [...task.pythonPath, ...m.pythonPath],
    env: { ...task.env, ...m.env },
    budget: { maxEvals: m.maxEvals ?? task.budget.maxEvals },
    declaredNeeds: m.declaredNeeds,
    manifestOverrides: evaluationOverrides(m, e.dir),
  };
  if (m.dependencies.length > 0) checkDependencies(merged, m.dependencies, m.file);
  return merged;
}

/**
 * What a manifest entry changes that can change a score (not its budget or domain), for the task's content hash:
 * paths relative to the task folder, and the interpreter as the manifest names it, so a copy elsewhere hashes alike.
 * Only what the entry says: a default of the manifest's loader (HarnessTTT's 360 s timeout) is hone's, the same for
 * every entry, and would change the hash of every task such a manifest lists.
 */
function evaluationOverrides(m: EntryOverrides, dir: string): Record<string, unknown> {
  const rel = (p: string | undefined) => (p === undefined ? undefined : relativeTo(dir, p));
  const o: Record<string, unknown> = {
    direction: m.direction,
    metric: m.metric,
    timeout: m.timeout,
    python: m.python,
    env: Object.keys(m.env).length > 0 ? m.env : undefined,
    config: rel(m.load.config),
    phase: m.load.phase,
    seed: rel(m.load.seed),
    evaluator: rel(m.load.evaluator),
  };
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
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
