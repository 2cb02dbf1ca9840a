/**
 * One OpenAI-style chat message. Tool calls carry their arguments as the raw JSON string the model wrote. An
 * assistant message keeps the model's `reasoning` text when the server returned one (vLLM's `reasoning` or
 * `reasoning_content`); whether it goes back to the server is the dialect's choice (dialect.ts).
 */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[]; reasoning?: string }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ToolDefinition {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Sampling settings a harness or a run may set. Undefined fields are left to the server. */
export interface Sampling {
  temperature?: number;
  top_p?: number;
  top_k?: number;
  max_tokens?: number;
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  repetition_penalty?: number;
  chat_template_kwargs?: Record<string, unknown>;
  /** Reasoning models (OpenAI o-series and gpt-5, vLLM's gpt-oss and others): how hard to think. */
  reasoning_effort?: ReasoningEffort;
  /** Whether the model may call several tools in one turn; sent only when set and tools are offered. */
  parallel_tool_calls?: boolean;
  /** Ask for a server-sent-event stream (the harness's `llm_config.stream`; a model setting overrides it). */
  stream?: boolean;
}

export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

export interface ChatRequest {
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  tool_choice?: "auto" | "required" | "none";
  sampling?: Sampling;
  /** Index of a repeated sample of the same request; part of cache keys so repeats never collapse. */
  trial?: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Part of completion_tokens spent thinking, where the server reports it (`completion_tokens_details`). */
  reasoning_tokens?: number;
  /** Part of prompt_tokens the server read from its prompt cache, where it reports it (`prompt_tokens_details`). */
  cached_tokens?: number;
}

export interface ChatResponse {
  /**
   * Tool calls keep the server's ids; a call the server gave no id has `id: ""` (the agent loop names it). `refusal`:
   * the model declined (OpenAI); with no text of its own the refusal is the content too.
   */
  message: { content: string | null; tool_calls: ToolCall[]; reasoning?: string; refusal?: string };
  finish_reason: string;
  usage: Usage;
  /** Wall-clock time of the call as seen by the client, retries included. */
  latency_ms: number;
  /** Attempts made (1 when the first succeeded). */
  attempts: number;
  model: string;
  cached?: boolean;
  /**
   * The model's context window in tokens as the client knew it when it made the call (vLLM's `max_model_len` from
   * /v1/models); recorded with the response so a replay compacts exactly as the run did.
   */
  context_window?: number;
  /** Retried failures on the way to this response (kind and message), for the records. */
  faults?: { kind: string; message: string }[];
}

/** The one contract of the model layer: an OpenAI-style chat completion with tools. */
export interface ChatModel {
  readonly id: string;
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResponse>;
  /** The exact body this model sends for a request (cache keys hash it); absent for models that send none. */
  wireBody?(request: ChatRequest): unknown;
}

export const zeroUsage = (): Usage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

export function addUsage(into: Usage, more: Usage): void {
  into.prompt_tokens += more.prompt_tokens;
  into.completion_tokens += more.completion_tokens;
  into.total_tokens += more.total_tokens;
  if (more.reasoning_tokens !== undefined) into.reasoning_tokens = (into.reasoning_tokens ?? 0) + more.reasoning_tokens;
  if (more.cached_tokens !== undefined) into.cached_tokens = (into.cached_tokens ?? 0) + more.cached_tokens;
}
