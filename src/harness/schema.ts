import * as z from "zod";
import { REASONING_EFFORTS } from "../model/types.ts";

/** Names of tools whose implementation hone provides; a harness binds them by name. */
export const BUILTIN_TOOLS = [
  "view_program",
  "edit_program",
  "evaluate_program",
  "load_skill",
  "finish",
  "calculator",
  "final_answer",
  "oracle_answer",
] as const;
export const TOOL_NAME = /^[a-z][a-z0-9_]{2,31}$/;
/** A name a tool may be offered to the model under (`offered_as`): what chat APIs accept as a function name. */
export const OFFERED_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const SKILL_NAME = /^[a-z0-9](?:[a-z0-9]|-(?!-)){0,62}[a-z0-9]$|^[a-z0-9]$/;

const envRef = z
  .string()
  .regex(/^\$\{env\.[A-Za-z_][A-Za-z0-9_]*\}$/, "write the API key as $" + "{env.VARIABLE}; keys are never stored in a package");

/** Sampling and server defaults, NexAU's llm_config. model/base_url are defaults the run's flags override. */
export const llmConfigSchema = z
  .object({
    model: z.string().min(1).optional(),
    base_url: z.string().url().optional(),
    api_key: envRef.optional(),
    api_type: z.string().optional(),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().gt(0).max(1).optional(),
    top_k: z.number().int().min(-1).max(1000).optional(),
    max_tokens: z.number().int().min(16).max(131_072).optional(),
    seed: z.number().int().min(0).optional(),
    presence_penalty: z.number().min(-2).max(2).optional(),
    frequency_penalty: z.number().min(-2).max(2).optional(),
    repetition_penalty: z.number().gt(0).max(2).optional(),
    chat_template_kwargs: z.record(z.string(), z.unknown()).optional(),
    reasoning_effort: z.enum(REASONING_EFFORTS).optional(),
    parallel_tool_calls: z.boolean().optional(),
  })
  .strict();

export const toolRefSchema = z
  .object({
    name: z.string().regex(TOOL_NAME, "tool names are 3-32 characters: a lowercase letter, then letters, digits or _"),
    yaml_path: z.string().min(1),
    binding: z.string().optional(),
    lazy: z.boolean().optional(),
    /** The name the model is offered for this tool when it is not hone's (a NexAU package's edit_solution, LoadSkill). */
    offered_as: z
      .string()
      .regex(OFFERED_NAME, "an offered tool name is 1-64 letters, digits, _ or -, starting with a letter")
      .optional(),
  })
  .strict();

export const middlewareRefSchema = z
  .object({
    import: z.string().min(1),
    params: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

/** agent.yaml: NexAU's field names where they overlap; unknown keys are errors. */
export const agentSchema = z
  .object({
    type: z.literal("agent").default("agent"),
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "use up to 64 lowercase letters, digits, - and _"),
    description: z.string().max(2000).optional(),
    system_prompt: z.string().min(1).default("prompt.md"),
    system_prompt_type: z.enum(["file", "string"]).default("file"),
    max_iterations: z.number().int().min(1).max(1000).default(60),
    timeout: z.number().positive().max(86_400).default(600),
    llm_config: llmConfigSchema.default({}),
    tools: z.array(toolRefSchema).default([]),
    skills: z.array(z.union([z.string().min(1), z.object({ name: z.string(), path: z.string() }).strict()])).optional(),
    middlewares: z.array(middlewareRefSchema).default([]),
    stop_tools: z.array(z.string()).default(["finish"]),
  })
  .strict();
export type AgentFile = z.infer<typeof agentSchema>;

const jsonSchemaObject = z
  .object({ type: z.literal("object") })
  .passthrough()
  .describe("a JSON Schema whose type is object");

export const toolFileSchema = z
  .object({
    type: z.literal("tool").default("tool"),
    name: z.string().regex(TOOL_NAME, "tool names are 3-32 characters: a lowercase letter, then letters, digits or _"),
    description: z.string().min(1).max(4000),
    input_schema: jsonSchemaObject,
    skill_description: z.string().optional(),
    binding: z.string().optional(),
  })
  .strict();
export type ToolFile = z.infer<typeof toolFileSchema>;

export const skillFrontmatterSchema = z
  .object({
    name: z.string().max(64).regex(SKILL_NAME, "skill names are lowercase letters, digits and single hyphens, not at either end"),
    description: z.string().min(1).max(1024),
    license: z.string().optional(),
    compatibility: z.string().max(500).optional(),
    metadata: z.record(z.string(), z.string()).optional(),
    "allowed-tools": z.string().optional(),
  })
  .strict();
