import type { Sampling } from "../model/types.ts";
import type { ProgramHarness } from "./program.ts";

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** `builtin` tools are hone's own; `custom` tools are generated code in custom_tools/<name>.js or <name>.py. */
  kind: "builtin" | "custom";
  file: string;
  source?: string;
  /** agent.yaml's `binding` for a built-in tool: which of hone's implementations it binds (e.g. hone:wrong-answer). */
  binding?: string;
  /** A custom tool's language: `custom_tools/<name>.js` (the default) or `custom_tools/<name>.py` (HarnessTTT's). */
  language?: ToolLanguage;
  /**
   * The name the model is offered and calls this tool by, when it is not `name` (agent.yaml's `offered_as`): an
   * imported NexAU package's own names (edit_solution for edit_program, LoadSkill for load_skill), which its prompt uses.
   */
  offeredAs?: string;
}

export type ToolLanguage = "javascript" | "python";

export interface Skill {
  name: string;
  description: string;
  body: string;
  file: string;
}

export interface MiddlewareConfig {
  /** For built-ins the name after `hone:`; for generated middleware its file stem. */
  name: string;
  kind: "builtin" | "custom";
  params: Record<string, unknown>;
  file?: string;
  source?: string;
}

/** A loaded, validated harness package. */
export interface Harness {
  dir: string;
  name: string;
  description?: string;
  systemPrompt: string;
  maxIterations: number;
  timeoutSec: number;
  sampling: Sampling;
  defaults: { model?: string; baseUrl?: string; apiKeyEnv?: string };
  tools: ToolSpec[];
  skills: Skill[];
  middlewares: MiddlewareConfig[];
  stopTools: string[];
  /** sha256 over every file of the package (path and bytes), for measurement identity. */
  contentHash: string;
  files: string[];
  /** Set when the folder is a harness program (harness.json): rollouts and QA tasks run it instead of the agent loop. */
  program?: ProgramHarness;
}
