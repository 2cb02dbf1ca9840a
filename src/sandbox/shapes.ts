import * as z from "zod";

/** The declared shapes generated middleware may return, per hook. Anything else is refused. */
export const middlewareResultShapes = {
  beforeModel: z
    .object({
      append: z
        .array(z.object({ role: z.literal("user"), content: z.string().min(1).max(4000) }).strict())
        .max(3)
        .optional(),
      note: z.string().max(200).optional(),
    })
    .strict()
    .nullable(),
  afterModel: z
    .object({ note: z.string().max(200).optional() })
    .strict()
    .nullable(),
  beforeTool: z
    .object({ note: z.string().max(200).optional() })
    .strict()
    .nullable(),
  afterTool: z
    .object({ output: z.string().max(100_000).optional(), note: z.string().max(200).optional() })
    .strict()
    .nullable(),
} as const;

export type HookName = keyof typeof middlewareResultShapes;
