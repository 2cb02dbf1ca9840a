import { dirname, resolve } from "node:path";
import { z } from "zod";
import { DEFAULT_TIMEOUTS } from "../model/timeouts.ts";
import { readConfigFile } from "./config-file.ts";
import { DEFAULT_PROPOSER_HARNESS, type OptimizeSettings } from "./optimize.ts";
import { DEFAULT_HARNESS } from "./run.ts";

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

/** hone.yaml for `hone optimize --config`: the same options as the flags (flags win). */
export const optimizeConfigSchema = z
  .object({
    $schema: z.string().optional(),
    task: z.string().min(1),
    tasks_dir: z.string().optional(),
    seed_harness: z.string().optional(),
    proposer_harness: z.string().optional(),
    executor: modelSchema.default({ model: "offline" }),
    proposer: modelSchema.default({ model: "offline" }),
    rounds: z.number().int().min(1).max(1000).default(3),
    proposals: z.number().int().min(1).max(64).default(4),
    method: z.string().min(1).default("harnessttt"),
    method_params: z.record(z.string(), z.unknown()).default({}),
    max_evals: z.number().int().min(1).max(10_000).optional(),
    concurrency: z.number().int().min(1).max(256).default(4),
    paired: z.boolean().default(false),
    noise_repeats: z.number().int().min(1).max(100).default(3),
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
    out: z.string().optional(),
  })
  .strict()
  .refine((c) => c.learning.mode !== "lora" || c.learning.lora !== undefined, {
    message: "learning.mode lora needs learning.lora.trainer_command",
    path: ["learning", "lora"],
  });
export type OptimizeConfig = z.infer<typeof optimizeConfigSchema>;

export function readOptimizeConfig(file: string): OptimizeConfig {
  const data = readConfigFile(file, optimizeConfigSchema);
  const base = dirname(resolve(file));
  const rel = (p: string | undefined) =>
    p && !p.startsWith("/") && (p.startsWith(".") || p.includes("/")) ? resolve(base, p) : p;
  return {
    ...data,
    task: rel(data.task) as string,
    tasks_dir: rel(data.tasks_dir),
    seed_harness: rel(data.seed_harness),
    proposer_harness: rel(data.proposer_harness),
    out: rel(data.out),
  };
}

const toModel = (m: z.infer<typeof modelSchema>) => ({
  model: m.model,
  baseUrl: m.base_url,
  dialect: m.dialect,
  apiKeyEnv: m.api_key_env,
  keepSampling: m.keep_sampling,
  stream: m.stream,
  timeouts: m.timeouts,
  offlineLatencyMs: m.offline_latency_ms,
});

export function settingsFromConfig(c: OptimizeConfig, defaultMaxEvals: number): OptimizeSettings {
  return {
    task: c.task,
    tasksDir: c.tasks_dir,
    seedHarness: c.seed_harness ?? DEFAULT_HARNESS,
    proposerHarness: c.proposer_harness ?? DEFAULT_PROPOSER_HARNESS,
    executor: toModel(c.executor),
    proposer: toModel(c.proposer),
    rounds: c.rounds,
    proposalsPerRound: c.proposals,
    method: c.method,
    methodParams: c.method_params,
    maxEvals: c.max_evals ?? defaultMaxEvals,
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
        ? {
            trainerCommand: c.learning.lora.trainer_command,
            baseModel: c.learning.lora.base_model,
            adapterPrefix: c.learning.lora.adapter_prefix,
            timeoutSec: c.learning.lora.timeout,
          }
        : undefined,
    },
  };
}
