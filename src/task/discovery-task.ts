import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import * as z from "zod";
import { taskError, zodIssues } from "../errors.ts";
import { YamlRefused } from "../yaml-depth.ts";
import { missingDescription } from "./description-hint.ts";
import type { MetricFallback } from "./evaluation.ts";
import { type EvaluatorEntries, evaluatorEntries } from "./evaluator-entry.ts";
import { editableRegions, findRegions, hasEvolveMarkers } from "./evolve-block.ts";
import {
  containerRefusal,
  detectLayout,
  type FolderLayout,
  isUnder,
  type LayoutOptions,
  linkedOutOf,
  looksLikeTaskFolder,
  readSeedText,
  type TaskLayout,
} from "./layouts.ts";
import { parseTaskYaml, readUpstreamYaml } from "./upstream-yaml.ts";

export type Direction = "maximize" | "minimize";

/** One discovery problem: a seed program with an editable region, a black-box evaluator and a budget. */
export interface DiscoveryTask {
  kind: "discovery";
  id: string;
  dir: string;
  description: string;
  seedProgram: string;
  seedPath: string;
  programExtension: string;
  evaluatorPath: string;
  metric: string;
  direction: Direction;
  reference?: { value: number; source?: string };
  budget: { maxEvals: number };
  timeoutSec: number;
  memoryMb: number;
  python: string;
  pythonPath: string[];
  env: Record<string, string>;
  domain?: string;
  /** Where the task and its reference value come from, and the evaluator's rules in words (hone tasks show). */
  source?: string;
  rules?: string;
  /** OpenEvolve cascade: evaluate_stage1/2/3 run in turn while combined_score clears each threshold. */
  cascade: { enabled: boolean; thresholds: number[] };
  /** Modules the warm program zygote imports up front (default numpy). */
  programPreload: string[];
  /** The most processes one evaluated program may have at once (its threads count too). */
  maxProcesses: number;
  /** The size (MB) of each private /tmp and /dev/shm, the evaluator's and each program's (hone.yaml `tmp_mb`). */
  tmpMb?: number;
  /** Extra host folders the evaluator (not the program) may read, from hone.yaml `evaluator_read_only`. */
  evaluatorReadOnly?: string[];
  /** Device globs bound into the evaluator's and the programs' sandboxes (hone.yaml `devices`). */
  devices?: string[];
  /** Strings that must never appear in a harness (hidden data, marked secrets); the evaluator source is added at load. */
  secrets: string[];
  /** Which field layout the folder is in, and the upstream config file read (with its phase, if one of several). */
  layout: TaskLayout;
  configPath?: string;
  phase?: { n: number; all: number[] };
  /** What scores a result that lacks the metric (OpenEvolve's mean of the numeric metrics, or nothing). */
  metricFallback: MetricFallback;
  /** What a manifest declares the task needs, in its own words (HarnessTTT's deps mix modules and data). */
  declaredNeeds?: string[];
  /** hone.yaml `stochastic`: whether the evaluator's score varies for one program; undefined means measured. */
  stochastic?: boolean;
  /**
   * hone.yaml `evaluator_state`: "fresh" (the default) forks a fresh copy of the loaded evaluator per evaluation;
   * "kept" runs evaluations in the loaded evaluator's process itself, for an evaluator that keeps no state between
   * calls and runs programs only through hone_runtime (checked: one that runs them in its own process falls back).
   */
  evaluatorState: EvaluatorState;
  /** hone.yaml `show_reference`: whether a proposer or method may be told the reference value (default no). */
  showReference?: boolean;
  /**
   * Whether the executor is shown the evaluator's named artifacts and list- or object-valued metrics (OpenEvolve's
   * `prompt.include_artifacts` and `evaluator.enable_artifacts`, both on by default there and here).
   */
  showArtifacts?: boolean;
  /** What a manifest entry (tasks.yaml) changes about how the folder is evaluated, for its content hash (content-hash.ts). */
  manifestOverrides?: Record<string, unknown>;
}

export const honeTaskSchema = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{1,63}$/, "use 2-64 lowercase letters, digits and hyphens")
      .optional(),
    description: z.string().min(1).optional(),
    metric: z.string().min(1).default("combined_score"),
    direction: z.enum(["maximize", "minimize"]).default("maximize"),
    reference: z.object({ value: z.number().finite(), source: z.string().optional() }).strict().optional(),
    budget: z
      .object({ max_evals: z.number().int().min(1).max(100_000) })
      .strict()
      .optional(),
    timeout: z.number().positive().max(86_400).optional(),
    memory_mb: z.number().int().min(64).max(1_048_576).optional(),
    python: z.string().min(1).optional(),
    python_path: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    domain: z.string().optional(),
    secrets: z.array(z.string().min(8)).default([]),
    program_preload: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/)).default(["numpy", "numpy.random"]),
    max_processes: z.number().int().min(1).max(4096).default(64),
    /** The size (MB) of each private /tmp and /dev/shm, the evaluator's and each program's (a tmpfs: host memory). */
    tmp_mb: z.number().int().min(16).max(1_048_576).optional(),
    /** Host folders the evaluator may read beyond the task folder (a toolchain such as ~/.cargo); never programs. */
    evaluator_read_only: z.array(z.string().min(1)).max(32).default([]),
    /** Device files (globs like /dev/nvidia*) the evaluator and the programs it runs may use, e.g. a GPU. */
    devices: z
      .array(z.string().regex(/^\/dev\//, "a device path under /dev/"))
      .max(64)
      .default([]),
    source: z.string().optional(),
    rules: z.string().optional(),
    metric_fallback: z.enum(["mean", "none"]).optional(),
    stochastic: z.boolean().optional(),
    show_reference: z.boolean().optional(),
    /** fresh: a fresh copy of the evaluator per evaluation; kept: one evaluator process for every evaluation. */
    evaluator_state: z.enum(["fresh", "kept"]).default("fresh"),
  })
  .strict();

export type EvaluatorState = "fresh" | "kept";

const configSchema = z
  .object({
    prompt: z
      .object({ system_message: z.string().optional(), include_artifacts: z.boolean().optional() })
      .passthrough()
      .nullish(),
    llm: z.object({ system_message: z.string().optional() }).passthrough().nullish(),
    evaluator: z
      .object({
        timeout: z.number().positive().optional(),
        cascade_evaluation: z.boolean().optional(),
        cascade_thresholds: z.array(z.number()).optional(),
        enable_artifacts: z.boolean().optional(),
      })
      .passthrough()
      .optional(),
    database: z
      .object({ feature_dimensions: z.array(z.string()).optional() })
      .passthrough()
      .nullish(),
  })
  .passthrough();

function readYaml(file: string, read: (file: string) => unknown = (f) => parseTaskYaml(readFileSync(f, "utf8"))): unknown {
  try {
    return read(file) ?? {};
  } catch (err) {
    throw taskError(file, undefined, err instanceof YamlRefused ? err.message : `is not valid YAML: ${(err as Error).message}`);
  }
}

function checked<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const r = schema.safeParse(value);
  if (!r.success) {
    const first = zodIssues(r.error.issues)[0];
    throw taskError(file, first?.field, `${first?.message ?? "invalid"}`);
  }
  return r.data;
}

export const DEFAULT_MEMORY_MB = 4096;
export const DEFAULT_MAX_EVALS = 20;

/**
 * What each upstream framework does when its config says nothing: the per-evaluation limit (OpenEvolve's and
 * SkyDiscover's EvaluatorConfig.timeout, SimpleTES's EngineConfig.eval_timeout), the cascade (OpenEvolve runs
 * evaluate_stage1/2/3 by default; SkyDiscover's container and SimpleTES call evaluate() alone) and a result without
 * combined_score (OpenEvolve averages its numeric metrics; SkyDiscover's container wrapper writes 0.0 and SimpleTES
 * refuses it, so hone counts it invalid there).
 */
export const UPSTREAM_DEFAULTS: Record<TaskLayout, { timeoutSec: number; cascade: boolean; fallback: "mean" | "none" }> = {
  openevolve: { timeoutSec: 300, cascade: true, fallback: "mean" },
  skydiscover: { timeoutSec: 360, cascade: false, fallback: "none" },
  simpletes: { timeoutSec: 3000, cascade: false, fallback: "none" },
};
const OPENEVOLVE_THRESHOLDS = [0.5, 0.75, 0.9];
/** OpenEvolve's and SkyDiscover's default MAP-Elites feature dimensions, left out of the mean. */
const DEFAULT_FEATURES = ["complexity", "diversity"];

export interface LoadOptions extends LayoutOptions {
  id?: string;
  /** The limit when neither hone.yaml nor the config sets one (a manifest's framework default). */
  defaultTimeoutSec?: number;
  /** Folders a manifest adds to the evaluator's python_path: its sandbox sees them, as it sees hone.yaml's. */
  pythonPath?: string[];
}

/** A path to a config file inside a task folder names the folder and that config (as OpenEvolve's `--config`). */
/** The task folder a `--task` path names, and the config file when it names one. */
export function splitRef(ref: string): { dir: string; config?: string } {
  const path = resolve(ref);
  if (!/\.ya?ml$/.test(path) || !existsSync(path) || !statSync(path).isFile()) return { dir: path };
  // A config in a subfolder of the task folder (OpenEvolve's examples/sldbench/configs/*.yaml, run with --config).
  const here = dirname(path);
  const parent = dirname(here);
  return { dir: !looksLikeTaskFolder(here) && looksLikeTaskFolder(parent) ? parent : here, config: path };
}

const MAX_DESCRIPTION_BYTES = 256 << 10;

type Described = { prompt?: { system_message?: string } | null; llm?: { system_message?: string } | null };

/** The sandbox's own mounts: a folder bound read-only on or under one would cover what the sandbox made there. */
const SANDBOX_OWN = ["/proc", "/dev", "/sys"];

/**
 * `path`, hone.yaml's `raw` in `field` resolved, if the evaluator's sandbox may bind it read-only. Refuses `/`, `/tmp`
 * and paths on or under /proc, /dev or /sys: bound there they would cover the sandbox's own (its processes, its
 * devices, its private /tmp), and the warm pool could no longer see its namespace empty. Device files go in `devices`.
 */
function bound(field: string, raw: string, path: string, honePath: string): string {
  const covers = path === "/" || path === "/tmp" || SANDBOX_OWN.some((own) => path === own || path.startsWith(`${own}/`));
  if (covers)
    throw taskError(
      honePath,
      field,
      `${raw} would cover the sandbox's own ${path}; name the folder the evaluator needs (device files go in devices)`,
    );
  return path;
}

/** hone.yaml's description, else the config's system message (OpenEvolve reads prompt's, else llm's), else SimpleTES's .txt. */
function readDescription(hone: { description?: string }, config: Described, l: FolderLayout) {
  if (hone.description) return hone.description;
  const message = config.prompt?.system_message ?? config.llm?.system_message;
  if (message) return message;
  if (!l.descriptionPath) return undefined;
  if (statSync(l.descriptionPath).size > MAX_DESCRIPTION_BYTES)
    throw taskError(
      l.descriptionPath,
      undefined,
      `is larger than ${MAX_DESCRIPTION_BYTES >> 10} KB; a task description is read whole`,
    );
  return readFileSync(l.descriptionPath, "utf8");
}

/** The id of a folder loaded with a config other than its default one (a later phase, or a named file). */
function configuredId(dir: string, l: FolderLayout, config?: string): string {
  const base = basename(dir);
  const hasPlain = existsSync(join(dir, "config.yaml")) || existsSync(join(dir, "config.yml"));
  if (l.phase && (l.phase.n !== l.phase.all[0] || hasPlain)) return `${base}-phase${l.phase.n}`;
  if (config && l.configPath && !l.phase && !/^config\.ya?ml$/.test(basename(config)))
    return `${base}-${basename(config).replace(/\.ya?ml$/, "")}`;
  return base;
}

/**
 * The seed's EVOLVE blocks must pair. A seed with no marker at all is editable whole in the OpenEvolve layout (as
 * OpenEvolve treats it); the other layouts' frameworks mark the region, so there it is a mistake.
 */
function checkSeedRegions(seedPath: string, seed: string, layout: TaskLayout): void {
  try {
    if (layout === "openevolve") editableRegions(seed);
    else findRegions(seed);
  } catch (err) {
    const hint = hasEvolveMarkers(seed) ? "" : " (only an OpenEvolve-layout folder's seed may go without them, editable whole)";
    throw taskError(seedPath, "EVOLVE-BLOCK", `${(err as Error).message}${hint}`);
  }
}

/**
 * An evaluator that is a symbolic link out of its task folder (`evaluator.py -> ../shared/evaluator.py`) runs when
 * its file lies in a folder the evaluator's sandbox sees too (python_path, evaluator_read_only); else it is refused,
 * since the sandbox would not find it, and so it is refused alike where hone runs without one.
 */
function checkEvaluatorLink(dir: string, evaluatorPath: string, seen: string[]): void {
  const real = linkedOutOf(dir, evaluatorPath);
  if (real === undefined || seen.some((folder) => existsSync(folder) && isUnder(realpathSync(folder), real))) return;
  throw taskError(
    evaluatorPath,
    undefined,
    `is a link to ${real}, outside the task folder ${dir} and every folder hone.yaml lists in python_path or evaluator_read_only: the evaluator's sandbox sees only those, so it would not find the file. Copy the file into the task folder, or list its folder (${dirname(real)}) in hone.yaml's evaluator_read_only (python_path if the evaluator imports from it)`,
  );
}

/** What the evaluator binds of the runner's entry points; refuses one that binds neither, saying why. */
function checkedEntries(dir: string, evaluatorPath: string, source: string, python: string): EvaluatorEntries {
  const entries = evaluatorEntries(source, python);
  if (entries.evaluate || entries.stage1) return entries;
  if (entries.syntaxError)
    throw taskError(evaluatorPath, undefined, `is not valid Python (${entries.syntaxError}), so it defines no evaluate()`);
  throw (
    containerRefusal(dir, evaluatorPath) ??
    taskError(
      evaluatorPath,
      "evaluate",
      "binds no evaluate(program_path) (nor evaluate_stage1) at module level: define it (def or async def), or import it from the module that does",
    )
  );
}

/**
 * Loads a task folder in the OpenEvolve, SkyDiscover or SimpleTES layout (see layouts.ts), plus an optional hone.yaml.
 * `ref` may also name a config file inside the folder (`circle_packing/config_phase_2.yaml`).
 */
export function loadTaskFolder(ref: string, overrides: LoadOptions = {}): DiscoveryTask {
  const { dir, config: configRef } = splitRef(ref);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw taskError(dir, undefined, "is not a task folder (no such directory)");
  const layout = detectLayout(dir, { ...overrides, config: overrides.config ?? configRef });
  const { seedPath, evaluatorPath, configPath } = layout;

  const seedProgram = readSeedText(seedPath);
  checkSeedRegions(seedPath, seedProgram, layout.layout);

  // The upstream framework's own config, read as it reads it (upstream-yaml.ts); hone.yaml is hone's, read by the spec.
  const config = configPath ? checked(configSchema, readYaml(configPath, readUpstreamYaml), configPath) : {};
  const honePath = join(dir, "hone.yaml");
  const rawHone = existsSync(honePath) ? readYaml(honePath) : {};
  const hone = checked(honeTaskSchema, rawHone, honePath);
  const metricSet = typeof rawHone === "object" && rawHone !== null && "metric" in rawHone;
  // A command name is looked up on PATH; a path (./venv/bin/python) resolves against the task folder.
  const python = hone.python?.includes("/") ? resolve(dir, hone.python) : (hone.python ?? "python3");
  const pythonPath = hone.python_path.map((p) => bound("python_path", p, resolve(dir, p), honePath));
  const evaluatorReadOnly = hone.evaluator_read_only.map((p) =>
    bound("evaluator_read_only", p, resolve(dir, p.replace(/^~(?=\/|$)/, homedir())), honePath),
  );
  checkEvaluatorLink(dir, evaluatorPath, [...pythonPath, ...evaluatorReadOnly, ...(overrides.pythonPath ?? [])]);
  const evaluatorSource = readFileSync(evaluatorPath, "utf8");
  const entries = checkedEntries(dir, evaluatorPath, evaluatorSource, python);

  const description = readDescription(hone, config, layout);
  if (!description || description.trim().length === 0) throw missingDescription(dir, configPath);
  const upstream = UPSTREAM_DEFAULTS[layout.layout];
  const fallback = hone.metric_fallback ?? (!metricSet && hone.metric === "combined_score" ? upstream.fallback : "none");
  return {
    kind: "discovery",
    id: overrides.id ?? hone.id ?? configuredId(dir, layout, configRef ?? overrides.config),
    dir,
    description: description.trim(),
    seedProgram,
    seedPath,
    programExtension: seedPath.slice(seedPath.lastIndexOf(".")),
    evaluatorPath,
    metric: hone.metric,
    direction: hone.direction,
    reference: hone.reference,
    budget: { maxEvals: hone.budget?.max_evals ?? DEFAULT_MAX_EVALS },
    timeoutSec: hone.timeout ?? config.evaluator?.timeout ?? overrides.defaultTimeoutSec ?? upstream.timeoutSec,
    memoryMb: hone.memory_mb ?? DEFAULT_MEMORY_MB,
    python,
    pythonPath,
    env: hone.env,
    domain: hone.domain,
    secrets: [evaluatorSource, ...hone.secrets],
    cascade: {
      enabled: upstream.cascade && entries.stage1 && (config.evaluator?.cascade_evaluation ?? true),
      thresholds: config.evaluator?.cascade_thresholds ?? OPENEVOLVE_THRESHOLDS,
    },
    programPreload: hone.program_preload,
    maxProcesses: hone.max_processes,
    tmpMb: hone.tmp_mb,
    evaluatorReadOnly,
    devices: hone.devices,
    source: hone.source,
    rules: hone.rules,
    layout: layout.layout,
    configPath,
    phase: layout.phase,
    metricFallback: { rule: fallback, exclude: config.database?.feature_dimensions ?? DEFAULT_FEATURES },
    stochastic: hone.stochastic,
    showReference: hone.show_reference,
    showArtifacts: config.prompt?.include_artifacts !== false && config.evaluator?.enable_artifacts !== false,
    evaluatorState: hone.evaluator_state,
  };
}
