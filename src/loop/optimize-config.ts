// hone optimize's options: ONE zod schema with defaults, which validates a config file (hone.yaml), the command
// line's flags and the TypeScript settings of `optimize()` alike; each entry point says where a bad value came from.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as z from "zod";
import { HoneError } from "../errors.ts";
import { recordedMethodRef } from "../method/method-ref.ts";
import { DEFAULT_TIMEOUTS } from "../model/timeouts.ts";
import { recordedTaskRef } from "../task/builtin.ts";
import { readConfigFile } from "./config-file.ts";
import type { OptimizeSettings } from "./optimize.ts";
import { DEFAULT_HARNESS } from "./run.ts";

export const DEFAULT_PROPOSER_HARNESS = resolve(DEFAULT_HARNESS, "..", "proposer");
/** The seed harness of a QA benchmark run: a calculator and a final-answer tool. */
export const DEFAULT_QA_HARNESS = resolve(DEFAULT_HARNESS, "..", "qa");

/** A count option: a whole number from 1 to `max`, said so in the refusal whatever was given. */
const count = (max: number) => {
  const says = `a whole number from 1 to ${max}`;
  return z.number({ error: says }).int(says).min(1, says).max(max, says);
};

const modelSchema = z
  .object({
    model: z.string().min(1),
    base_url: z.string().url().optional(),
    dialect: z.enum(["vllm", "openai"]).optional(),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "the name of an environment variable")
      .optional(),
    keep_sampling: z.boolean().optional(),
    stream: z.boolean().optional(),
    timeouts: z
      .object(Object.fromEntries(Object.keys(DEFAULT_TIMEOUTS).map((k) => [k, z.number().positive().max(86_400)])))
      .partial()
      .strict()
      .optional(),
    offline_latency_ms: z.number().min(0).optional(),
  })
  .strict();

/** A QA benchmark as the search's target: the method sees `train`, the final choice is measured on `validation`. */
const benchmarkSchema = z
  .object({
    id: z.string().min(1).describe("a QA benchmark id (`hone datasets` lists them)"),
    train: count(1_000_000).default(40).describe("tasks of the train split every candidate is measured on"),
    validation: count(1_000_000).default(40).describe("tasks of the validation split the final choice is measured on"),
    data_dir: z.string().min(1).optional().describe("where the benchmark's files are (default: hone's data folder)"),
    split_seed: z.number().int().min(0).default(0).describe("divides train and validation (as in experiment files)"),
  })
  .strict();

/** hone.yaml for `hone optimize --config`, and the shape every other entry point is checked against. */
export const optimizeConfigSchema = z
  .object({
    $schema: z.string().optional(),
    task: z.string().min(1).optional().describe("a discovery task: a built-in id or a task folder"),
    benchmark: benchmarkSchema.optional().describe("a QA benchmark instead of a task"),
    tasks_dir: z.string().optional(),
    seed_harness: z.string().optional(),
    proposer_harness: z.string().optional(),
    executor: modelSchema.default({ model: "offline" }),
    proposer: modelSchema.default({ model: "offline" }),
    rounds: count(1000).default(3),
    proposals: count(64).default(4),
    method: z.string().min(1).default("harnessttt"),
    method_params: z.record(z.string(), z.unknown()).default({}),
    max_evals: count(10_000).optional().describe("evaluator calls per rollout (default: the task's budget)"),
    concurrency: count(256).default(4),
    paired: z.boolean().default(false),
    noise_repeats: count(100).default(3),
    seed: z.number().int().min(0).default(0),
    warm_pool: z.boolean().default(true),
    time_limit: z.number().positive().optional(),
    learning: z
      .object({
        mode: z.enum(["context", "lora"]).default("context"),
        digest_tokens: z.number().int().min(100).max(100_000).default(2000),
        lora: z
          .object({
            trainer_command: z.string().min(1),
            base_model: z.string().optional(),
            adapter_prefix: z
              .string()
              .regex(/^[A-Za-z0-9_.-]+$/)
              .optional(),
            timeout: z.number().positive().optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({ mode: "context", digest_tokens: 2000 }),
    cache: z
      .object({ mode: z.enum(["off", "read-write", "replay"]).default("read-write"), dir: z.string().optional() })
      .strict()
      .optional(),
    queue: z
      .string()
      .regex(/^rediss?:\/\//, "a Redis URL, e.g. redis://127.0.0.1:6379")
      .optional(),
    slurm: z
      .object({
        partition: z.string().optional(),
        gres: z.string().optional(),
        time_minutes: z.number().positive().optional(),
        env: z.array(z.string()).optional(),
        template: z.string().optional(),
      })
      .strict()
      .optional(),
    out: z.string().optional(),
  })
  .strict()
  .refine((c) => c.learning.mode !== "lora" || c.learning.lora !== undefined, {
    message: "learning.mode lora needs learning.lora.trainer_command",
    path: ["learning", "lora"],
  })
  .refine((c) => (c.task === undefined) !== (c.benchmark === undefined), {
    message: "give exactly one of task (a discovery task) and benchmark (a QA benchmark)",
    path: ["task"],
  })
  .refine((c) => !(c.benchmark && c.paired), {
    message: "paired controls are for discovery tasks; a QA candidate is already compared task by task with the incumbent",
    path: ["paired"],
  });
export type OptimizeConfig = z.infer<typeof optimizeConfigSchema>;
/** The options as written, before defaults (what flags and TypeScript settings are converted to). */
export type OptimizeConfigInput = z.input<typeof optimizeConfigSchema>;

/** Reads hone.yaml; every relative path in it resolves against the file's folder, not the current one. */
export function readOptimizeConfig(file: string): OptimizeConfig {
  const data = readConfigFile(file, optimizeConfigSchema);
  const base = dirname(resolve(file));
  const path = (p: string | undefined) => (p === undefined ? p : resolve(base, p));
  // `task` is a built-in id or a folder: a folder when it looks like a path or a task folder of that name is beside
  // the file.
  const t = data.task;
  const folder = t !== undefined && (/[/\\]|^\./.test(t) || existsSync(join(base, t, "evaluator.py")));
  const task = folder && t !== undefined ? resolve(base, t) : t;
  return {
    ...data,
    task,
    benchmark: data.benchmark ? { ...data.benchmark, data_dir: path(data.benchmark.data_dir) } : undefined,
    tasks_dir: path(data.tasks_dir),
    seed_harness: path(data.seed_harness),
    proposer_harness: path(data.proposer_harness),
    out: path(data.out),
    method: recordedMethodRef(data.method, base),
    cache: data.cache ? { ...data.cache, dir: path(data.cache.dir) } : undefined,
    slurm: data.slurm ? { ...data.slurm, template: path(data.slurm.template) } : undefined,
  };
}

/** Validates options against the schema; `where(field)` names the origin of a bad field (a flag, a key). */
export function parseOptimizeConfig(raw: unknown, where: (field: string) => string): OptimizeConfig {
  const r = optimizeConfigSchema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue?.path.map(String).join(".") ?? "";
  throw new HoneError("usage", `${where(field)}: ${issue?.message ?? "invalid"}`);
}

type Model = z.infer<typeof modelSchema>;
type ModelInput = OptimizeSettings["executor"];

const toModel = (m: Model): ModelInput => ({
  model: m.model,
  baseUrl: m.base_url,
  dialect: m.dialect,
  apiKeyEnv: m.api_key_env,
  keepSampling: m.keep_sampling,
  stream: m.stream,
  timeouts: m.timeouts,
  offlineLatencyMs: m.offline_latency_ms,
});

/** A model in the config file's names (only what is given). */
export const fromModel = (m: Partial<ModelInput>): Partial<Model> => ({
  model: m.model,
  base_url: m.baseUrl,
  dialect: m.dialect,
  api_key_env: m.apiKeyEnv,
  keep_sampling: m.keepSampling,
  stream: m.stream,
  timeouts: m.timeouts as Model["timeouts"],
  offline_latency_ms: m.offlineLatencyMs,
});

const clean = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/**
 * The run's settings from validated options. `defaultMaxEvals` is the task's own budget; a QA benchmark has no
 * evaluator budget per rollout (each task's answer is scored once), recorded as 1.
 */
export function settingsFromConfig(c: OptimizeConfig, defaultMaxEvals: number): OptimizeSettings {
  return absolutePaths({
    task: c.task,
    benchmark: c.benchmark
      ? clean({
          id: c.benchmark.id,
          train: c.benchmark.train,
          validation: c.benchmark.validation,
          dataDir: c.benchmark.data_dir,
          splitSeed: c.benchmark.split_seed,
        })
      : undefined,
    tasksDir: c.tasks_dir,
    seedHarness: c.seed_harness ?? (c.benchmark ? DEFAULT_QA_HARNESS : DEFAULT_HARNESS),
    proposerHarness: c.proposer_harness ?? DEFAULT_PROPOSER_HARNESS,
    executor: clean(toModel(c.executor)),
    proposer: clean(toModel(c.proposer)),
    rounds: c.rounds,
    proposals: c.proposals,
    method: c.method,
    methodParams: c.method_params,
    maxEvals: c.benchmark ? 1 : (c.max_evals ?? defaultMaxEvals),
    concurrency: c.concurrency,
    paired: c.paired,
    noiseRepeats: c.noise_repeats,
    seed: c.seed,
    warmPool: c.warm_pool,
    timeLimitSec: c.time_limit,
    learning: {
      mode: c.learning.mode,
      digestTokens: c.learning.digest_tokens,
      lora: c.learning.lora
        ? clean({
            trainerCommand: c.learning.lora.trainer_command,
            baseModel: c.learning.lora.base_model,
            adapterPrefix: c.learning.lora.adapter_prefix,
            timeoutSec: c.learning.lora.timeout,
          })
        : undefined,
    },
    cache: c.cache ? clean({ mode: c.cache.mode, dir: c.cache.dir }) : undefined,
    queue: c.queue,
    slurm: c.slurm
      ? clean({
          partition: c.slurm.partition,
          gres: c.slurm.gres,
          timeMinutes: c.slurm.time_minutes,
          env: c.slurm.env,
          template: c.slurm.template,
        })
      : undefined,
  });
}

/** What `optimize()` may be given from TypeScript: a task or a benchmark, and anything else to override a default. */
export type OptimizeInput = Partial<Omit<OptimizeSettings, "benchmark" | "learning">> & {
  benchmark?: { id: string; train?: number; validation?: number; dataDir?: string; splitSeed?: number };
  learning?: Partial<OptimizeSettings["learning"]>;
};

const INPUT_KEYS: Record<string, string> = {
  task: "task",
  benchmark: "benchmark",
  tasksDir: "tasks_dir",
  seedHarness: "seed_harness",
  proposerHarness: "proposer_harness",
  executor: "executor",
  proposer: "proposer",
  rounds: "rounds",
  proposals: "proposals",
  method: "method",
  methodParams: "method_params",
  maxEvals: "max_evals",
  concurrency: "concurrency",
  paired: "paired",
  noiseRepeats: "noise_repeats",
  seed: "seed",
  warmPool: "warm_pool",
  timeLimitSec: "time_limit",
  learning: "learning",
  cache: "cache",
  queue: "queue",
  slurm: "slurm",
  replayOf: "",
};

/**
 * A run's settings as its hone.db recorded them. Runs made before one name was used for the proposals per round
 * recorded `proposalsPerRound`; they are read as `proposals`, so they resume and replay.
 */
export function recordedSettings(raw: Record<string, unknown>): OptimizeSettings {
  const { proposalsPerRound: old, ...rest } = raw;
  // An older run's relative folders resolve against the current folder, as they always did.
  return absolutePaths(
    (old !== undefined && rest.proposals === undefined ? { ...rest, proposals: old } : rest) as unknown as OptimizeSettings,
  );
}

/**
 * `s` with every folder it names absolute (a task given as a folder, the harnesses, the tasks, data and cache folders,
 * a method given as a folder), as a run records them: a resumed or replayed run may start in another folder.
 */
function absolutePaths(s: OptimizeSettings): OptimizeSettings {
  const path = (p: string | undefined) => (p === undefined ? p : resolve(p));
  return clean({
    ...s,
    task: s.task === undefined ? undefined : recordedTaskRef(s.task),
    benchmark: s.benchmark ? clean({ ...s.benchmark, dataDir: path(s.benchmark.dataDir) }) : undefined,
    tasksDir: path(s.tasksDir),
    seedHarness: path(s.seedHarness) as string,
    proposerHarness: path(s.proposerHarness) as string,
    method: s.method === undefined ? undefined : recordedMethodRef(s.method),
    cache: s.cache ? clean({ ...s.cache, dir: path(s.cache.dir) }) : undefined,
  });
}

/** TypeScript settings in the config file's shape, to be validated by the one schema (unknown keys refused). */
export function configOfInput(s: OptimizeInput): OptimizeConfigInput {
  const unknown = Object.keys(s).filter((k) => !(k in INPUT_KEYS));
  if (unknown.length)
    throw new HoneError(
      "usage",
      `optimize(): unknown setting ${unknown.join(", ")}; known: ${Object.keys(INPUT_KEYS).join(", ")}`,
    );
  const l = s.learning;
  return clean({
    task: s.task,
    benchmark: s.benchmark
      ? clean({
          id: s.benchmark.id,
          train: s.benchmark.train,
          validation: s.benchmark.validation,
          data_dir: s.benchmark.dataDir,
          split_seed: s.benchmark.splitSeed,
        })
      : undefined,
    tasks_dir: s.tasksDir,
    seed_harness: s.seedHarness || undefined,
    proposer_harness: s.proposerHarness || undefined,
    executor: s.executor ? (clean(fromModel(s.executor)) as Model) : undefined,
    proposer: s.proposer ? (clean(fromModel(s.proposer)) as Model) : undefined,
    rounds: s.rounds,
    proposals: s.proposals,
    method: s.method,
    method_params: s.methodParams,
    max_evals: s.benchmark ? undefined : s.maxEvals,
    concurrency: s.concurrency,
    paired: s.paired,
    noise_repeats: s.noiseRepeats,
    seed: s.seed,
    warm_pool: s.warmPool,
    time_limit: s.timeLimitSec,
    learning: l
      ? clean({
          mode: l.mode,
          digest_tokens: l.digestTokens,
          lora: l.lora
            ? clean({
                trainer_command: l.lora.trainerCommand,
                base_model: l.lora.baseModel,
                adapter_prefix: l.lora.adapterPrefix,
                timeout: l.lora.timeoutSec,
              })
            : undefined,
        })
      : undefined,
    cache: s.cache ? clean({ mode: s.cache.mode, dir: s.cache.dir }) : undefined,
    queue: s.queue,
    slurm: s.slurm
      ? clean({
          partition: s.slurm.partition,
          gres: s.slurm.gres,
          time_minutes: s.slurm.timeMinutes,
          env: s.slurm.env,
          template: s.slurm.template,
        })
      : undefined,
  }) as OptimizeConfigInput;
}

/** The TypeScript name of a config field, for `optimize()`'s error messages. */
export function inputName(field: string): string {
  const top = field.split(".")[0] ?? field;
  const ts = Object.entries(INPUT_KEYS).find(([, v]) => v === top)?.[0] ?? top;
  return `optimize(): ${[ts, ...field.split(".").slice(1)].join(".")}`;
}
