import type { ChatMessage, ChatRequest, Sampling, ToolDefinition } from "../types.ts";

/**
 * What the offline model's server shares with modules every run loads (resolving a model, hone's model proxy), in a
 * module of its own: importing them from server.ts loaded the offline model's policies and roles into every
 * `hone optimize` and `hone replay`, whether or not it served the offline model.
 */

/** The model id of hone's built-in offline model. */
export const OFFLINE_MODEL_ID = "offline";

/** A chat-completions request body as hone's request: its messages, tools and sampling. */
export function requestFromBody(body: Record<string, unknown>): ChatRequest {
  const sampling: Sampling = {};
  for (const k of ["temperature", "top_p", "top_k", "seed"] as const) {
    if (typeof body[k] === "number") sampling[k] = body[k] as number;
  }
  const maxTokens = body.max_tokens ?? body.max_completion_tokens;
  if (typeof maxTokens === "number") sampling.max_tokens = maxTokens;
  return {
    messages: body.messages as ChatMessage[],
    tools: Array.isArray(body.tools) ? (body.tools as ToolDefinition[]) : undefined,
    sampling,
  };
}
