import type { BuiltinMiddlewareName } from "../middleware-params.ts";

// What hone knows of NexAU's agent.yaml (nex-agi/NexAU, nexau/archs/main_sub/config) and of the packages HarnessTTT
// (gray311/Self_Adapt_Harness, src/inner/harness and its compiler) writes in that layout: which bindings and
// middleware classes are hone's own under another name, and what each of their parameters becomes.

/** The folder of a hone package that holds the NexAU package as it was imported (read by `hone harness export`). */
export const ORIGIN_DIR = "nexau-origin";

export const DISCOVERY_MODULE = "inner.harness.tools.discovery";
/** HarnessTTT binds every generated Python tool to this dispatcher, the file named in extra_kwargs. */
export const CUSTOM_TOOL_BINDING = "inner.harness.tools.custom_runtime:custom_tool";
export const PY_PATH_ARG = "_sah_py_path";
const LEGACY_PY_PATH_ARG = "py_path";
export const PY_PATH_ARGS = [PY_PATH_ARG, LEGACY_PY_PATH_ARG];

/** HarnessTTT's fixed tools and the hone tool each one is (`probe_solution` is hone's PROBE_TOOL, see below). */
export const FIXED_TOOLS = [
  { nexau: "edit_solution", hone: "edit_program" },
  { nexau: "evaluate_solution", hone: "evaluate_program" },
  { nexau: "probe_solution", hone: "probe_solution" },
  { nexau: "finish", hone: "finish" },
] as const;
export const fixedBinding = (nexau: string) => `${DISCOVERY_MODULE}:${nexau}`;

/**
 * `probe_solution` in hone: a generated tool hone writes itself, since hone has no fixed probe tool. It runs the
 * current program outside the budget and reports only whether it is valid: hone's probe runs the full evaluator,
 * so a score from it would be a free evaluation (HarnessTTT's probe scores a subsample instead). Export recognises
 * this exact source and writes HarnessTTT's probe_solution binding back.
 */
export const PROBE_TOOL_SOURCE = `// hone's probe_solution (written by hone harness import for HarnessTTT's probe tool): runs the current program
// outside the evaluation budget and says whether it is valid. hone's probe gives no score (it would be a free
// evaluation); the score comes from the budgeted evaluation tool.
async function run(ctx, args) {
  const r = await ctx.probe();
  if (r.error) return "PROBE not run: " + r.error;
  if (r.valid) return "PROBE: the current program runs and is valid (no score: run the evaluation tool to score it).";
  return "PROBE: FAILED: " + r.reason + ". Fix the program before a full evaluation.";
}
`;

/** The name NexAU offers its skill loader under (nexau/archs/tool/builtin/description/skill_tool.yaml): hone's load_skill. */
export const NEXAU_SKILL_TOOL = "LoadSkill";

/** Tools NexAU packages do not list but hone needs, added on import with the texts of harnesses/initial. */
export const ADDED_TOOLS = {
  view_program: {
    type: "tool",
    name: "view_program",
    description: "Show the current program in full, with the line range of the editable EVOLVE block.",
    input_schema: { type: "object", properties: {}, additionalProperties: false },
  },
  load_skill: {
    type: "tool",
    name: "load_skill",
    description: "Load the full text of a skill listed in the system prompt.",
    input_schema: {
      type: "object",
      properties: { name: { type: "string", description: "The skill's name as listed." } },
      required: ["name"],
      additionalProperties: false,
    },
  },
} as const;

/** The argument shapes of HarnessTTT's fixed tool functions, written on export when a hone package has others. */
export const FIXED_SCHEMAS: Record<string, Record<string, unknown>> = {
  edit_solution: {
    type: "object",
    properties: {
      code: {
        type: "string",
        description: "SEARCH/REPLACE block(s) to apply to the current program, or the whole new EVOLVE-BLOCK body.",
      },
    },
    required: ["code"],
    additionalProperties: false,
  },
  evaluate_solution: { type: "object", properties: {}, additionalProperties: false },
  probe_solution: { type: "object", properties: {}, additionalProperties: false },
  finish: {
    type: "object",
    properties: { summary: { type: "string", minLength: 1, description: "One line on the final approach and best score." } },
    required: ["summary"],
    additionalProperties: false,
  },
};

/** A NexAU middleware class that is one of hone's built-ins, and how its parameters map. */
export interface MappedMiddleware {
  hone: BuiltinMiddlewareName;
  /** Import paths that name it; the first is what export writes for a package that was not imported. */
  imports: string[];
  /** NexAU parameter → hone parameter. */
  params: Record<string, string>;
  /** NexAU parameters hone does not apply (kept in nexau-origin/ and written back on export). */
  inert: Record<string, string>;
  /** The class's own defaults, used when agent.yaml leaves a mapped parameter out. */
  defaults: Record<string, unknown>;
  /** How hone's behaviour differs, said once when the package is read. */
  differs?: string;
}

const NEXAU_MW = "nexau.archs.main_sub.execution.middleware";

export const MAPPED_MIDDLEWARES: MappedMiddleware[] = [
  {
    hone: "budget_reminder",
    imports: [
      "inner.harness.middleware.budget_reminder:BudgetReminderMiddleware",
      "middlewares.budget_reminder:BudgetReminderMiddleware",
    ],
    params: { remind_from_left: "from_calls_left" },
    inert: {},
    defaults: { remind_from_left: 3 },
  },
  {
    hone: "stall_restart",
    imports: [
      "inner.harness.middleware.stall_restart:StallRestartMiddleware",
      "middlewares.stall_restart:StallRestartMiddleware",
    ],
    params: { stall_after: "after_evaluations", max_restarts: "max_restarts" },
    inert: {},
    defaults: { stall_after: 8, max_restarts: 2 },
    differs:
      "StallRestartMiddleware runs as hone:stall_restart, which puts the best program back after the stall (HarnessTTT's only advises a structural restart)",
  },
  {
    hone: "long_tool_output",
    imports: [`${NEXAU_MW}.long_tool_output:LongToolOutputMiddleware`],
    params: { max_output_chars: "max_chars", head_chars: "head_chars", tail_chars: "tail_chars" },
    inert: {
      head_lines: "hone cuts by characters only",
      tail_lines: "hone cuts by characters only",
      temp_dir: "hone keeps the full output in the trajectory, not in a file",
      bypass_tool_names: "hone cuts every tool's output",
    },
    defaults: { max_output_chars: 10_000, head_chars: 5000, tail_chars: 5000 },
  },
];

/** NexAU middlewares that only add advisory text hone's loop does not need; read, not applied, kept for export. */
export const ADVISORY_MIDDLEWARES: Record<string, string> = {
  [`${NEXAU_MW}.round_and_token_reminder:RoundAndTokenReminderMiddleware`]:
    "RoundAndTokenReminderMiddleware (iteration and token hints) is not applied: hone's task message states the budget, hone:budget_reminder counts it down, and hone:context_budget keeps a conversation inside the window",
};

/** agent.yaml keys hone maps onto its own harness fields. */
export const MAPPED_KEYS = [
  "type",
  "name",
  "description",
  "system_prompt",
  "system_prompt_type",
  "max_iterations",
  "timeout",
  "llm_config",
  "tools",
  "stop_tools",
  "skills",
  "middlewares",
];

/** agent.yaml keys whose NexAU behaviour hone has its own way of doing; read, not applied, kept for export. */
export const INERT_KEYS: Record<string, string> = {
  max_context_tokens: "hone takes the context window from the endpoint (or hone:context_budget)",
  retry_attempts: "hone's client makes up to 5 attempts per call, with backoff",
  retry_backoff_max_seconds: "hone's client makes up to 5 attempts per call, with backoff",
  sandbox_config: "generated code runs in hone's own sandbox",
  tracers: "hone writes its own trajectory",
  source_id: "provenance only",
  max_running_subagents: "no sub-agents",
  skipped_components: "provenance only",
  global_storage: "hone tools keep no global storage",
};

/** agent.yaml keys that change behaviour in ways hone cannot reproduce: refused unless empty. */
export const REFUSED_KEYS: Record<string, string> = {
  sub_agents: "hone runs one agent; remove the sub-agents",
  mcp_servers: "hone does not connect to MCP servers; remove them",
  before_model_hooks: "Python hooks cannot run in hone; use a hone middleware",
  after_model_hooks: "Python hooks cannot run in hone; use a hone middleware",
  before_tool_hooks: "Python hooks cannot run in hone; use a hone middleware",
  after_tool_hooks: "Python hooks cannot run in hone; use a hone middleware",
  plugins: "NexAU plugins cannot run in hone; remove them",
  token_counter: "hone counts tokens from the server's usage; remove it",
  error_handler: "Python error handlers cannot run in hone; remove it",
  system_prompt_suffix: "fold the suffix into the system prompt file",
  initial_state: "hone starts every rollout from the task; remove it",
  initial_config: "hone starts every rollout from the task; remove it",
  initial_context: "hone starts every rollout from the task; remove it",
  context: "hone starts every rollout from the task; remove it",
};

/** llm_config keys hone sends under the same name. */
export const LLM_KEYS = [
  "model",
  "base_url",
  "max_tokens",
  "temperature",
  "top_p",
  "top_k",
  "stream",
  "seed",
  "presence_penalty",
  "frequency_penalty",
  "repetition_penalty",
  "reasoning_effort",
  "parallel_tool_calls",
  "chat_template_kwargs",
];
/** llm_config.extra_body keys (vLLM's sampling extensions) hone sends itself. */
export const EXTRA_BODY_KEYS = ["top_k", "repetition_penalty", "chat_template_kwargs"];
export const API_TYPE = "openai_chat_completion";
/** Placeholder keys local servers accept; not a secret, so dropped on import and written back on export. */
export const PLACEHOLDER_KEYS = ["EMPTY", "", "none", "None"];
