import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { taskError, zodIssues } from "../errors.ts";
import { findRegions } from "./evolve-block.ts";

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
  /** Strings that must never appear in a harness (hidden data, marked secrets); the evaluator source is added at load. */
  secrets: string[];
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
    program_preload: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/)).default(["numpy"]),
    max_processes: z.number().int().min(1).max(4096).default(64),
    source: z.string().optional(),
    rules: z.string().optional(),
  })
  .strict();

const configSchema = z
  .object({
    prompt: z.object({ system_message: z.string().optional() }).passthrough().optional(),
    evaluator: z
      .object({
        timeout: z.number().positive().optional(),
        cascade_evaluation: z.boolean().optional(),
        cascade_thresholds: z.array(z.number()).optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

const SEED_NAMES = ["initial_program.py", "initial_program.js", "initial_program.cpp", "initial_program.rs"];

function readYaml(file: string): unknown {
  try {
    return parseYaml(readFileSync(file, "utf8")) ?? {};
  } catch (err) {
    throw taskError(file, undefined, `is not valid YAML: ${(err as Error).message}`);
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

export const DEFAULT_TIMEOUT_SEC = 60;
export const DEFAULT_MEMORY_MB = 4096;
export const DEFAULT_MAX_EVALS = 20;

/** Loads a task folder in the OpenEvolve / SkyDiscover / HarnessTTT layout, plus an optional hone.yaml. */
export function loadTaskFolder(dirArg: string, overrides: { id?: string } = {}): DiscoveryTask {
  const dir = resolve(dirArg);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw taskError(dir, undefined, "is not a task folder (no such directory)");
  const seedName = SEED_NAMES.find((n) => existsSync(join(dir, n)));
  if (!seedName) throw taskError(dir, undefined, `has no seed program; expected one of ${SEED_NAMES.join(", ")}`);
  const seedPath = join(dir, seedName);
  const evaluatorPath = join(dir, "evaluator.py");
  if (!existsSync(evaluatorPath)) throw taskError(dir, undefined, "has no evaluator.py defining evaluate(program_path)");
  const evaluatorSource = readFileSync(evaluatorPath, "utf8");
  if (!/^def\s+evaluate\s*\(/m.test(evaluatorSource))
    throw taskError(evaluatorPath, "evaluate", "defines no evaluate(program_path) function");

  const seedProgram = readFileSync(seedPath, "utf8");
  try {
    findRegions(seedProgram);
  } catch (err) {
    throw taskError(seedPath, "EVOLVE-BLOCK", (err as Error).message);
  }

  const configPath = join(dir, "config.yaml");
  const config = existsSync(configPath) ? checked(configSchema, readYaml(configPath), configPath) : {};
  const honePath = join(dir, "hone.yaml");
  const hone = checked(honeTaskSchema, existsSync(honePath) ? readYaml(honePath) : {}, honePath);

  const description = hone.description ?? config.prompt?.system_message;
  if (!description || description.trim().length === 0) {
    throw taskError(
      existsSync(configPath) ? configPath : honePath,
      "prompt.system_message",
      "the task has no description; set prompt.system_message in config.yaml or description in hone.yaml",
    );
  }
  return {
    kind: "discovery",
    id: overrides.id ?? hone.id ?? basename(dir),
    dir,
    description: description.trim(),
    seedProgram,
    seedPath,
    programExtension: seedName.slice(seedName.lastIndexOf(".")),
    evaluatorPath,
    metric: hone.metric,
    direction: hone.direction,
    reference: hone.reference,
    budget: { maxEvals: hone.budget?.max_evals ?? DEFAULT_MAX_EVALS },
    timeoutSec: hone.timeout ?? config.evaluator?.timeout ?? DEFAULT_TIMEOUT_SEC,
    memoryMb: hone.memory_mb ?? DEFAULT_MEMORY_MB,
    // A command name is looked up on PATH; a path (./venv/bin/python) resolves against the task folder.
    python: hone.python?.includes("/") ? resolve(dir, hone.python) : (hone.python ?? "python3"),
    pythonPath: hone.python_path.map((p) => resolve(dir, p)),
    env: hone.env,
    domain: hone.domain,
    secrets: [evaluatorSource, ...hone.secrets],
    cascade: { enabled: config.evaluator?.cascade_evaluation ?? false, thresholds: config.evaluator?.cascade_thresholds ?? [] },
    programPreload: hone.program_preload,
    maxProcesses: hone.max_processes,
    source: hone.source,
    rules: hone.rules,
  };
}
