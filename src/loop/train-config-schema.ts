// train.yaml's schema alone, with no QA benchmark behind it: `hone replay` checks a recorded train run's stored
// configuration with it, and loads the benchmarks only when it replays one (train-setup.ts). Reading a train.yaml
// (`readTrainConfig`, which checks its held-out split against the benchmark) is train-config.ts.
import * as z from "zod";

const model = z
  .object({
    model: z.string().min(1),
    base_url: z.string().url().optional(),
    dialect: z.enum(["vllm", "openai"]).optional(),
    api_key_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "the name of an environment variable")
      .optional(),
  })
  .strict();

/** train.yaml: the panel, the model, the estimator, the criterion and the patch surface. */
export const trainConfigSchema = z
  .object({
    $schema: z.string().optional(),
    harness: z.string().min(1),
    panel: z
      .object({
        benchmark: z.string().min(1),
        split: z.enum(["train", "validation", "test"]).default("validation"),
        limit: z.number().int().min(1).default(20),
        data_dir: z.string().optional(),
      })
      .strict(),
    model: model.default({ model: "offline" }),
    estimator: z.discriminatedUnion("kind", [
      z
        .object({
          kind: z.literal("llm"),
          proposer: model.default({ model: "offline" }),
          proposer_harness: z.string().optional(),
        })
        .strict(),
      z.object({ kind: z.literal("patch_queue"), patches: z.array(z.string().min(1)).min(1) }).strict(),
      z.object({ kind: z.literal("agent_cli"), command: z.string().min(1), timeout: z.number().positive().optional() }).strict(),
    ]),
    criterion: z
      .discriminatedUnion("kind", [
        z
          .object({
            kind: z.literal("strict_pareto"),
            secondary: z.array(z.enum(["steps", "tokens", "invalid_first_attempts"])).default(["steps", "tokens"]),
          })
          .strict(),
        z
          .object({
            kind: z.literal("mean_ci"),
            confidence: z.number().gt(0.5).lt(1).default(0.95),
            resamples: z.number().int().min(100).default(2000),
          })
          .strict(),
      ])
      .default({ kind: "strict_pareto", secondary: ["steps", "tokens"] }),
    /**
     * Measured once, at the end, on the seed harness and on HEAD: a split the panel is not drawn from, which no
     * estimator or criterion sees (after harness-training's quickstart: held-out eval, epochs, eval again).
     */
    held_out: z
      .object({
        split: z.enum(["train", "validation", "test"]).default("test"),
        limit: z.number().int().min(1).optional(),
      })
      .strict()
      .optional(),
    patch_surface: z.array(z.string().min(1)).optional(),
    concurrency: z.number().int().min(1).default(8),
    seed: z.number().int().min(0).default(0),
    out: z.string().optional(),
  })
  .strict();
export type TrainConfig = z.infer<typeof trainConfigSchema>;
