import * as z from "zod";
import { CONTROL, oneLine, printable } from "../printable.ts";
import { builtinMiddlewarePatches } from "./middleware-params.ts";
import { SKILL_NAME, TOOL_NAME } from "./schema.ts";

/** Tools every discovery harness keeps; only the others may be removed by a spec. */
export const REQUIRED_TOOLS = ["view_program", "edit_program", "evaluate_program", "finish"] as const;

export const SPEC_LIMITS = {
  systemPrompt: 8000,
  skillDescription: 1024,
  skillBody: 12_000,
  toolDescription: 4000,
  code: 16_000,
  /** A new tool's input_schema and a new middleware's params, as JSON: in agent.yaml, every model call, the proposer's prompt. */
  json: 4000,
  newTools: 3,
  newSkills: 2,
  newMiddlewares: 2,
} as const;

const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, "must not be empty");

/** A JSON value of at most SPEC_LIMITS.json characters: the texts have caps, and so does what a spec adds as data. */
const boundedJson = <T extends z.ZodType>(schema: T) =>
  schema.refine((v) => jsonLength(v) <= SPEC_LIMITS.json, `must be at most ${SPEC_LIMITS.json} characters as JSON`);

/** A value's length as JSON; one nested past what JSON.stringify can walk (a proposal's 5,000 brackets) is too long. */
function jsonLength(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

const jsonSchemaObject = boundedJson(z.object({ type: z.literal("object") }).passthrough());

/**
 * A partial change to a harness, merged over the incumbent. Fail-closed: unknown keys, out-of-range numbers and
 * empty texts are errors, and a spec that changes nothing is refused when it is compiled.
 */
export const harnessSpecSchema = z
  .object({
    rationale: z.string().max(1000).optional(),
    system_prompt: text(SPEC_LIMITS.systemPrompt).optional(),
    skill_description: z.record(z.string().regex(SKILL_NAME), text(SPEC_LIMITS.skillDescription)).optional(),
    skill_body: z.record(z.string().regex(SKILL_NAME), text(SPEC_LIMITS.skillBody)).optional(),
    tool_descriptions: z.record(z.string().regex(TOOL_NAME), text(SPEC_LIMITS.toolDescription)).optional(),
    sampling: z
      .object({
        temperature: z.number().min(0).max(1.5).optional(),
        top_p: z.number().gt(0).max(1).optional(),
        top_k: z.number().int().min(-1).max(200).optional(),
        max_tokens: z.number().int().min(1024).max(16_384).optional(),
      })
      .strict()
      .optional(),
    agent: z
      .object({ max_iterations: z.number().int().min(8).max(200) })
      .strict()
      .optional(),
    middleware_params: z
      .object({
        budget_reminder: builtinMiddlewarePatches.budget_reminder.optional(),
        stall_restart: builtinMiddlewarePatches.stall_restart.optional(),
        long_tool_output: builtinMiddlewarePatches.long_tool_output.optional(),
        context_budget: builtinMiddlewarePatches.context_budget.optional(),
      })
      .strict()
      .optional(),
    new_tools: z
      .array(
        z
          .object({
            name: z.string().regex(TOOL_NAME, "tool names are 3-32 characters: a lowercase letter, then letters, digits or _"),
            description: text(SPEC_LIMITS.toolDescription),
            input_schema: jsonSchemaObject,
            code: text(SPEC_LIMITS.code),
          })
          .strict(),
      )
      .max(SPEC_LIMITS.newTools)
      .optional(),
    new_skills: z
      .array(
        z
          .object({
            name: z.string().max(64).regex(SKILL_NAME),
            description: text(SPEC_LIMITS.skillDescription),
            body: text(SPEC_LIMITS.skillBody),
          })
          .strict(),
      )
      .max(SPEC_LIMITS.newSkills)
      .optional(),
    new_middlewares: z
      .array(
        z
          .object({
            name: z.string().regex(/^[a-z][a-z0-9_]{2,31}$/),
            code: text(SPEC_LIMITS.code),
            params: boundedJson(z.record(z.string(), z.unknown())).default({}),
          })
          .strict(),
      )
      .max(SPEC_LIMITS.newMiddlewares)
      .optional(),
    remove_tools: z.array(z.string().regex(TOOL_NAME)).max(8).optional(),
  })
  .strict();

export type HarnessSpec = z.infer<typeof harnessSpecSchema>;

export interface SpecProblem {
  field: string;
  message: string;
}

export function validateSpec(value: unknown): { spec?: HarnessSpec; problems: SpecProblem[] } {
  const r = harnessSpecSchema.safeParse(value);
  if (!r.success)
    return {
      problems: r.error.issues.map((i) => ({
        field: printable(i.path.map(String).join(".")) || "(top level)",
        message: printable(i.message),
      })),
    };
  const problems = controlCharacters(r.data);
  return problems.length ? { problems } : { spec: r.data, problems: [] };
}

export { oneLine, printable };

/** How deep a spec's values may nest (a tool's input_schema included): deeper is no schema a model needs. */
const MAX_SPEC_DEPTH = 64;

/**
 * Every string of a spec (keys too) holding a control character, named by its field, and a value nested past
 * MAX_SPEC_DEPTH; walked with a stack of its own (4,000 characters of JSON nest 2,000 deep: a recursion would throw).
 */
function controlCharacters(root: unknown): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const field = (where: string[]) => printable(where.join(".")) || "(top level)";
  const at = (s: string, where: string[]) => {
    const m = CONTROL.exec(s);
    if (!m) return;
    const code = `U+${(m[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;
    const message = `holds the control character ${code} at ${m.index}: texts may hold tabs and line breaks, no other control character`;
    problems.push({ field: field(where), message });
  };
  const stack: [unknown, string[]][] = [[root, []]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [v, path] = item;
    if (typeof v === "string") at(v, path);
    else if (v && typeof v === "object" && path.length >= MAX_SPEC_DEPTH)
      problems.push({ field: field(path), message: `nests deeper than ${MAX_SPEC_DEPTH} levels` });
    else if (Array.isArray(v)) for (const [i, x] of v.entries()) stack.push([x, [...path, String(i)]]);
    else if (v && typeof v === "object")
      for (const [k, x] of Object.entries(v)) {
        at(k, [...path, k]);
        stack.push([x, [...path, k]]);
      }
  }
  return problems;
}

/** The spec's changed fields as short labels, for digests, logs and meta.json. */
export function changedFields(spec: HarnessSpec): string[] {
  const out: string[] = [];
  if (spec.system_prompt) out.push("system_prompt");
  for (const k of Object.keys(spec.skill_description ?? {})) out.push(`skill_description.${k}`);
  for (const k of Object.keys(spec.skill_body ?? {})) out.push(`skill_body.${k}`);
  for (const k of Object.keys(spec.tool_descriptions ?? {})) out.push(`tool_descriptions.${k}`);
  for (const [k, v] of Object.entries(spec.sampling ?? {})) out.push(`sampling.${k}=${v}`);
  if (spec.agent) out.push(`agent.max_iterations=${spec.agent.max_iterations}`);
  for (const [m, p] of Object.entries(spec.middleware_params ?? {}))
    for (const [k, v] of Object.entries(p ?? {})) out.push(`${m}.${k}=${v}`);
  for (const t of spec.new_tools ?? []) out.push(`new_tool.${t.name}`);
  for (const s of spec.new_skills ?? []) out.push(`new_skill.${s.name}`);
  for (const m of spec.new_middlewares ?? []) out.push(`new_middleware.${m.name}`);
  for (const t of spec.remove_tools ?? []) out.push(`remove_tool.${t}`);
  return out;
}
