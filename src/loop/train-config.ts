import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import * as z from "zod";
import { configError } from "../errors.ts";
import { readConfigFile } from "./config-file.ts";

const model = z
  .object({
    model: z.string().min(1),
    base_url: z.string().url().optional(),
    dialect: z.enum(["vllm", "openai"]).optional(),
    api_key_env: z.string().optional(),
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

/**
 * Reads train.yaml. Every relative path in it (harness, panel.data_dir, estimator.patches,
 * estimator.proposer_harness, out) resolves against the file's folder, not the current one.
 */
export function readTrainConfig(file: string): TrainConfig & { base: string } {
  const data = readConfigFile(file, trainConfigSchema);
  if (data.held_out && data.held_out.split === data.panel.split)
    throw configError(
      file,
      "held_out.split",
      `is the panel's split (${data.panel.split}); a held-out evaluation needs a split the panel is not drawn from`,
    );
  const base = dirname(resolve(file));
  const path = (p: string | undefined) => (p === undefined ? p : resolve(base, p));
  const e = data.estimator;
  return {
    ...data,
    harness: resolve(base, data.harness),
    panel: { ...data.panel, data_dir: path(data.panel.data_dir) },
    estimator:
      e.kind === "patch_queue"
        ? { ...e, patches: e.patches.map((p, i) => (p.includes("\n") ? p : patchFile(file, i, resolve(base, p)))) }
        : e.kind === "llm"
          ? { ...e, proposer_harness: path(e.proposer_harness) }
          : e,
    out: path(data.out),
    base,
  };
}

/** A patch file is read whole into the run's records: far above any diff a person or an agent writes. */
const MAX_PATCH_BYTES = 16 * 1024 * 1024;

/** `path`, the patch file of estimator.patches[i] in `file`, when it is a regular file hone can read whole. */
function patchFile(file: string, i: number, path: string): string {
  let why: string | undefined;
  try {
    const s = statSync(path);
    if (!s.isFile()) why = "is not a regular file";
    else if (s.size > MAX_PATCH_BYTES) why = `is larger than ${MAX_PATCH_BYTES / 1024 / 1024} MiB`;
  } catch (err) {
    why = `cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  if (why) throw configError(file, `estimator.patches.${i}`, `${path} ${why}`);
  return path;
}
