import { z } from "zod";

/** Parameters of hone's built-in middlewares, validated when a package loads so errors name the field. */
export const builtinMiddlewareParams = {
  budget_reminder: z
    .object({
      from_calls_left: z.number().int().min(1).max(10_000).default(5),
      message: z.string().min(1).max(2000).default("Budget: {left} evaluator call(s) left. Keep the best program in mind."),
    })
    .strict(),
  stall_restart: z
    .object({
      after_evaluations: z.number().int().min(1).max(10_000).default(6),
      max_restarts: z.number().int().min(0).max(1000).default(2),
    })
    .strict(),
  long_tool_output: z
    .object({
      max_chars: z.number().int().min(200).max(1_000_000).default(8000),
      head_chars: z.number().int().min(50).max(1_000_000).default(4000),
      tail_chars: z.number().int().min(50).max(1_000_000).default(2000),
    })
    .strict()
    .refine((p) => p.head_chars + p.tail_chars < p.max_chars, { message: "head_chars + tail_chars must be less than max_chars" }),
} as const;

export type BuiltinMiddlewareName = keyof typeof builtinMiddlewareParams;
export const BUILTIN_MIDDLEWARE_PREFIX = "hone:";
