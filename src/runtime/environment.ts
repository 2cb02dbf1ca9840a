import type { ToolDefinition } from "../model/types.ts";

/** What a tool call returned. `error` results go back to the model as errors; `stop` ends the rollout. */
export interface ToolOutcome {
  output: string;
  error?: boolean;
  stop?: boolean;
}

/** The task side of a rollout: the tools it implements and how they are called. */
export interface Environment {
  implements(tool: string): boolean;
  call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome>;
  /** True when nothing useful remains (budget spent); the loop stops after the current step. */
  exhausted(): boolean;
}

export const toolError = (message: string): ToolOutcome => ({ output: `Error: ${message}`, error: true });

export function toToolDefinition(t: { name: string; description: string; inputSchema: Record<string, unknown> }): ToolDefinition {
  return { type: "function", function: { name: t.name, description: t.description, parameters: t.inputSchema } };
}
