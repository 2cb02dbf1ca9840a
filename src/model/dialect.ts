import { isKnownNonReasoningModel, isOpenAIReasoningModel, refusesParallelToolCalls } from "./model-family.ts";
import type { ChatMessage, ChatRequest, ToolCall } from "./types.ts";

/**
 * How a request body is written for a server family.
 * - `vllm`: local OpenAI-compatible servers (vLLM, llama.cpp, Ollama, LM Studio). Sends every sampling field
 *   including vLLM's extras (top_k, repetition_penalty, chat_template_kwargs) and uses `max_tokens`. The model's
 *   reasoning goes back on assistant messages as `reasoning`, the field vLLM's chat parser hands to the template
 *   (interleaved thinking: Qwen3, GLM, gpt-oss templates decide what to render); servers that do not know it ignore it.
 * - `openai`: hosted APIs. No vLLM-only fields, `max_completion_tokens`, temperature/top_p left to the API unless
 *   `keepSampling` is set, for reasoning models (o-series, gpt-5) no penalties or seed either, and to the o-series no
 *   `parallel_tool_calls` (they refuse it; the model then calls tools as it does by default). Reasoning text is
 *   never sent back: OpenAI's chat API rejects unknown message fields and keeps its own reasoning server-side.
 */
export type Dialect = "vllm" | "openai";

export interface DialectOptions {
  dialect: Dialect;
  model: string;
  keepSampling?: boolean;
  /** Ask for a server-sent-event stream with usage in its last chunk. */
  stream?: boolean;
}

/**
 * The body of one chat completion. Key order is fixed by this code (cache keys hash the serialised body); fields
 * added later come after the older ones, so a request that uses none of them keeps its key.
 */
export function buildRequestBody(request: ChatRequest, opts: DialectOptions): Record<string, unknown> {
  const s = request.sampling ?? {};
  const body: Record<string, unknown> = { model: opts.model, messages: wireMessages(request.messages, opts.dialect) };
  const hasTools = request.tools !== undefined && request.tools.length > 0;
  if (hasTools) {
    body.tools = request.tools;
    body.tool_choice = request.tool_choice ?? "auto";
  }
  // Reasoning models reject penalties and seed; `keepSampling` is the explicit request to send them anyway.
  const tuning = opts.dialect === "vllm" || opts.keepSampling || !isOpenAIReasoningModel(opts.model);
  if (tuning && s.seed !== undefined) body.seed = s.seed;
  if (tuning && s.presence_penalty !== undefined) body.presence_penalty = s.presence_penalty;
  if (tuning && s.frequency_penalty !== undefined) body.frequency_penalty = s.frequency_penalty;
  if (opts.dialect === "vllm") {
    if (s.temperature !== undefined) body.temperature = s.temperature;
    if (s.top_p !== undefined) body.top_p = s.top_p;
    if (s.max_tokens !== undefined) body.max_tokens = s.max_tokens;
    if (s.top_k !== undefined) body.top_k = s.top_k;
    if (s.repetition_penalty !== undefined) body.repetition_penalty = s.repetition_penalty;
    if (s.chat_template_kwargs !== undefined) body.chat_template_kwargs = s.chat_template_kwargs;
    if (s.reasoning_effort !== undefined) body.reasoning_effort = s.reasoning_effort;
  } else {
    if (opts.keepSampling) {
      if (s.temperature !== undefined) body.temperature = s.temperature;
      if (s.top_p !== undefined) body.top_p = s.top_p;
    }
    if (s.max_tokens !== undefined) body.max_completion_tokens = s.max_tokens;
    if (s.reasoning_effort !== undefined && !isKnownNonReasoningModel(opts.model)) body.reasoning_effort = s.reasoning_effort;
  }
  // OpenAI refuses parallel_tool_calls without tools, and from its o-series at all; vLLM accepts it either way.
  const parallel = opts.dialect === "vllm" || !refusesParallelToolCalls(opts.model);
  if (hasTools && parallel && s.parallel_tool_calls !== undefined) body.parallel_tool_calls = s.parallel_tool_calls;
  if (opts.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

/**
 * Messages as the dialect's servers accept them. An assistant message without tool calls always has string
 * content (OpenAI refuses `content: null` there); reasoning goes back only in the vllm dialect, and so do tool-call
 * arguments made renderable (`vllmToolCalls`). The messages themselves are never changed: the trajectory keeps them.
 */
export function wireMessages(messages: readonly ChatMessage[], dialect: Dialect): readonly ChatMessage[] {
  let changed = false;
  const out = messages.map((m) => {
    if (m.role !== "assistant") return m;
    const wire = wireAssistant(m, dialect);
    if (wire !== m) changed = true;
    return wire;
  });
  return changed ? out : messages;
}

type AssistantMessage = Extract<ChatMessage, { role: "assistant" }>;

function wireAssistant(m: AssistantMessage, dialect: Dialect): AssistantMessage {
  const emptyText = m.content === null && !m.tool_calls?.length;
  const dropReasoning = m.reasoning !== undefined && (dialect === "openai" || m.reasoning === "");
  const calls = dialect === "vllm" && m.tool_calls ? vllmToolCalls(m.tool_calls) : m.tool_calls;
  if (!emptyText && !dropReasoning && calls === m.tool_calls) return m;
  // Keys keep their order (cache keys hash the serialised body): overriding a key leaves it where it was.
  const { reasoning, ...rest } = m;
  return {
    ...rest,
    content: emptyText ? "" : m.content,
    ...(calls !== m.tool_calls ? { tool_calls: calls } : {}),
    ...(dropReasoning ? {} : { reasoning }),
  };
}

/**
 * vLLM renders past tool calls with `json.loads` of each call's arguments (chat_utils `_postprocess_messages`) and
 * answers 400 when that fails, so a call the model cut short (`{"x": "abc`, finish_reason length) would end the
 * rollout, and the templates that iterate them (`tool_call.arguments | items`: Llama 3, Hermes) fail on anything but
 * a mapping. Arguments Python would not read as a mapping go as "{}"; a mapping and empty arguments (vLLM reads them
 * as {} itself) go as written, so a body changes only where vLLM would have refused it. OpenAI takes any string
 * there, so the openai dialect sends what the model wrote.
 */
function vllmToolCalls(calls: ToolCall[]): ToolCall[] {
  const renderable = (c: ToolCall) => c.function.arguments === "" || readsAsMapping(c);
  if (calls.every(renderable)) return calls;
  return calls.map((c) => (renderable(c) ? c : { ...c, function: { ...c.function, arguments: "{}" } }));
}

/** Each past call's verdict, kept with the call so a long conversation does not parse its history every step. */
const verdicts = new WeakMap<ToolCall, { args: string; ok: boolean }>();

function readsAsMapping(c: ToolCall): boolean {
  const args = c.function.arguments;
  const known = verdicts.get(c);
  if (known?.args === args) return known.ok;
  const ok = jsonMapping(args);
  verdicts.set(c, { args, ok });
  return ok;
}

/**
 * Whether Python's `json.loads` reads the text as a mapping. JSON.parse reads what it reads but NaN, Infinity and
 * -Infinity, which Python takes: an object's text holding those tokens is left as written (a refusal then is the
 * server's, as before).
 */
function jsonMapping(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v);
  } catch {
    return /^\s*\{/.test(text) && /NaN|Infinity/.test(text);
  }
}
