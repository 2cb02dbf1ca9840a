import type { ChatRequest } from "./types.ts";

/**
 * How a request body is written for a server family.
 * - `vllm`: local OpenAI-compatible servers (vLLM, llama.cpp, Ollama, LM Studio). Sends every sampling field
 *   including vLLM's extras (top_k, repetition_penalty, chat_template_kwargs) and uses `max_tokens`.
 * - `openai`: hosted APIs. No vLLM-only fields, `max_completion_tokens`, and temperature/top_p left to the API
 *   unless `keepSampling` is set (several hosted reasoning models reject them).
 */
export type Dialect = "vllm" | "openai";

export interface DialectOptions {
  dialect: Dialect;
  model: string;
  keepSampling?: boolean;
}

export function buildRequestBody(request: ChatRequest, opts: DialectOptions): Record<string, unknown> {
  const s = request.sampling ?? {};
  const body: Record<string, unknown> = { model: opts.model, messages: request.messages };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools;
    body.tool_choice = request.tool_choice ?? "auto";
  }
  if (s.seed !== undefined) body.seed = s.seed;
  if (s.presence_penalty !== undefined) body.presence_penalty = s.presence_penalty;
  if (s.frequency_penalty !== undefined) body.frequency_penalty = s.frequency_penalty;
  if (opts.dialect === "vllm") {
    if (s.temperature !== undefined) body.temperature = s.temperature;
    if (s.top_p !== undefined) body.top_p = s.top_p;
    if (s.max_tokens !== undefined) body.max_tokens = s.max_tokens;
    if (s.top_k !== undefined) body.top_k = s.top_k;
    if (s.repetition_penalty !== undefined) body.repetition_penalty = s.repetition_penalty;
    if (s.chat_template_kwargs !== undefined) body.chat_template_kwargs = s.chat_template_kwargs;
  } else {
    if (opts.keepSampling) {
      if (s.temperature !== undefined) body.temperature = s.temperature;
      if (s.top_p !== undefined) body.top_p = s.top_p;
    }
    if (s.max_tokens !== undefined) body.max_completion_tokens = s.max_tokens;
  }
  return body;
}
