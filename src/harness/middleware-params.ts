import * as z from "zod";

/** Ranges of hone's built-in middleware parameters, shared by package validation and HarnessSpec validation. */
const fields = {
  budget_reminder: {
    from_calls_left: z.number().int().min(1).max(10_000),
    message: z.string().min(1).max(2000),
  },
  stall_restart: {
    after_evaluations: z.number().int().min(1).max(10_000),
    max_restarts: z.number().int().min(0).max(1000),
  },
  long_tool_output: {
    max_chars: z.number().int().min(200).max(1_000_000),
    head_chars: z.number().int().min(50).max(1_000_000),
    tail_chars: z.number().int().min(50).max(1_000_000),
  },
  context_budget: {
    /** Tokens; used when the endpoint does not say its window (vLLM's max_model_len); when both do, the smaller. */
    context_window: z.number().int().min(512).max(10_000_000),
    /** Compact once the prompt would pass this share of the window left after max_tokens. */
    fill_ratio: z.number().min(0.3).max(0.95),
    /** The most recent assistant turns (with their tool results) that are never compacted. */
    keep_recent_turns: z.number().int().min(1).max(50),
    /** How an old tool output shrinks: a digest of its fields and first line, or its head and tail. */
    strategy: z.enum(["summarize", "truncate"]),
    /** The length an old tool output is cut to. */
    keep_chars: z.number().int().min(100).max(100_000),
  },
} as const;

const headTailFit = (p: { head_chars: number; tail_chars: number; max_chars: number }) =>
  p.head_chars + p.tail_chars < p.max_chars;

/** Parameters of hone's built-in middlewares, validated when a package loads so errors name the field. */
export const builtinMiddlewareParams = {
  budget_reminder: z
    .object({
      from_calls_left: fields.budget_reminder.from_calls_left.default(5),
      message: fields.budget_reminder.message.default("Budget: {left} evaluator call(s) left. Keep the best program in mind."),
    })
    .strict(),
  stall_restart: z
    .object({
      after_evaluations: fields.stall_restart.after_evaluations.default(6),
      max_restarts: fields.stall_restart.max_restarts.default(2),
    })
    .strict(),
  long_tool_output: z
    .object({
      max_chars: fields.long_tool_output.max_chars.default(8000),
      head_chars: fields.long_tool_output.head_chars.default(4000),
      tail_chars: fields.long_tool_output.tail_chars.default(2000),
    })
    .strict()
    .refine(headTailFit, { message: "head_chars + tail_chars must be less than max_chars" }),
  context_budget: z
    .object({
      context_window: fields.context_budget.context_window.optional(),
      fill_ratio: fields.context_budget.fill_ratio.default(0.8),
      keep_recent_turns: fields.context_budget.keep_recent_turns.default(3),
      strategy: fields.context_budget.strategy.default("summarize"),
      keep_chars: fields.context_budget.keep_chars.default(400),
    })
    .strict(),
} as const;

/** The same parameters, each optional: what a HarnessSpec may change (checked again after merging). */
export const builtinMiddlewarePatches = {
  budget_reminder: z.object(fields.budget_reminder).partial().strict(),
  stall_restart: z.object(fields.stall_restart).partial().strict(),
  long_tool_output: z.object(fields.long_tool_output).partial().strict(),
  context_budget: z.object(fields.context_budget).partial().strict(),
} as const;

export type ContextBudgetParams = z.infer<typeof builtinMiddlewareParams.context_budget>;

export type BuiltinMiddlewareName = keyof typeof builtinMiddlewareParams;
export const BUILTIN_MIDDLEWARE_PREFIX = "hone:";
