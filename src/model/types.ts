/** One OpenAI-style chat message. Tool calls carry their arguments as the raw JSON string the model wrote. */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
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
}

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
}

export interface ChatResponse {
  message: { content: string | null; tool_calls: ToolCall[] };
  finish_reason: string;
  usage: Usage;
  /** Wall-clock time of the call as seen by the client, retries included. */
  latency_ms: number;
  /** Attempts made (1 when the first succeeded). */
  attempts: number;
  model: string;
  cached?: boolean;
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
}
