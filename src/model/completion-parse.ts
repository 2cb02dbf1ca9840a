import { oneLine } from "../printable.ts";
import { ModelError } from "./errors.ts";
import type { ChatResponse, ToolCall, Usage } from "./types.ts";

/** The parts of a chat completion (whole or streamed) hone reads; everything else the server sends is ignored. */
interface RawUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
  /** OpenAI, and vLLM with --enable-prompt-tokens-details: the prompt's tokens served from the prefix cache. */
  prompt_tokens_details?: { cached_tokens?: number } | null;
}
interface RawToolCall {
  index?: number;
  id?: string | null;
  type?: string;
  function?: { name?: string | null; arguments?: string | null };
}
interface RawMessage {
  content?: string | null;
  /** OpenAI: the model declined; `content` is null then. */
  refusal?: string | null;
  /** vLLM ≥ 0.11 (and OpenRouter); older vLLM, SGLang, llama.cpp and DeepSeek say `reasoning_content`. */
  reasoning?: string | null;
  reasoning_content?: string | null;
  tool_calls?: RawToolCall[] | null;
}
export interface RawCompletion {
  model?: string;
  choices?: { message?: RawMessage; finish_reason?: string | null }[];
  usage?: RawUsage | null;
}
export interface RawChunk {
  model?: string;
  choices?: { index?: number; delta?: RawMessage; finish_reason?: string | null }[];
  usage?: RawUsage | null;
}

/** A streamed answer larger than this is refused rather than held in memory. */
const MAX_STREAM_CHARS = 8_000_000;
const MAX_TOOL_CALLS = 256;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

export function usageOf(u: RawUsage | null | undefined): Usage {
  const prompt = num(u?.prompt_tokens) ?? 0;
  const completion = num(u?.completion_tokens) ?? 0;
  const reasoning = num(u?.completion_tokens_details?.reasoning_tokens);
  const cached = num(u?.prompt_tokens_details?.cached_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(u?.total_tokens) ?? prompt + completion,
    ...(reasoning !== undefined ? { reasoning_tokens: reasoning } : {}),
    ...(cached !== undefined ? { cached_tokens: cached } : {}),
  };
}

const reasoningOf = (m: RawMessage) => str(m.reasoning) ?? str(m.reasoning_content);

/** Tool calls with the server's ids exactly as sent; a call without one gets `""` and the agent loop names it. */
function toolCallsOf(calls: RawToolCall[] | null | undefined): ToolCall[] {
  return (calls ?? [])
    .filter((c) => c && (c.type === undefined || c.type === "function") && typeof c.function?.name === "string")
    .map((c) => ({
      id: str(c.id) ?? "",
      type: "function" as const,
      function: { name: c.function?.name ?? "", arguments: str(c.function?.arguments) ?? "" },
    }));
}

/** What a server says in place of an answer when its engine dropped the request (vLLM: preemption, shutdown). */
const ABORTED = "abort";

function refuseAborted(finish: string | null | undefined, url: string, model: string): void {
  if (finish === ABORTED)
    throw new ModelError("server_error", `${url} aborted the answer for model ${model} (finish_reason "abort")`, { url });
}

/**
 * A refusal (OpenAI's `refusal`, with no content) is kept as the message's `refusal` and, where there is no text,
 * stands as its content too, so the trajectory and the conversation show what the model said.
 */
function response(
  message: { content: string | null; tool_calls: ToolCall[]; reasoning?: string; refusal?: string },
  finish: string | null | undefined,
  usage: Usage,
  model: string,
  latency_ms: number,
): ChatResponse {
  const { reasoning, refusal, ...rest } = message;
  const said = refusal ? { ...rest, content: rest.content ?? refusal, refusal } : rest;
  return {
    message: reasoning ? { ...said, reasoning } : said,
    finish_reason: finish ?? "stop",
    usage,
    latency_ms,
    attempts: 1,
    model,
  };
}

/** One whole completion. Empty text is no text: whole and streamed answers both record `null` for it. */
export function parseCompletion(raw: RawCompletion, url: string, model: string, latency_ms: number): ChatResponse {
  // The SDK hands over the text of an answer that is not JSON (a login page, a web app at a base URL without /v1).
  const body: unknown = raw;
  if (typeof body !== "object" || body === null) {
    const text = typeof body === "string" ? oneLine(body.slice(0, 120)) : String(body);
    throw new ModelError(
      "bad_response",
      `${url} answered model ${model} with something other than a JSON completion (${text || "an empty body"}): is --base-url the API's (it usually ends in /v1)?`,
      { url },
    );
  }
  const choice = raw.choices?.[0];
  if (!choice?.message) {
    throw new ModelError("bad_response", `${url} returned a completion with no choices for model ${model}`, { url });
  }
  refuseAborted(choice.finish_reason, url, model);
  const m = choice.message;
  return response(
    {
      content: str(m.content) || null,
      tool_calls: toolCallsOf(m.tool_calls),
      reasoning: reasoningOf(m),
      refusal: str(m.refusal) || undefined,
    },
    choice.finish_reason,
    usageOf(raw.usage),
    str(raw.model) ?? model,
    latency_ms,
  );
}

/**
 * Builds one completion from a stream of chunks: content and reasoning deltas appended, tool calls assembled by
 * index (id, type and name as first sent, arguments appended), usage from the final chunk (`include_usage`).
 */
export class StreamAccumulator {
  private content = "";
  private reasoning = "";
  private refusal = "";
  private readonly calls = new Map<number, RawToolCall & { function: { name: string; arguments: string } }>();
  private finish: string | undefined;
  private usage: RawUsage | undefined;
  private model: string | undefined;
  private chars = 0;
  private choices = 0;

  constructor(
    private readonly url: string,
    private readonly modelName: string,
  ) {}

  add(chunk: RawChunk): void {
    this.model ??= str(chunk.model);
    if (chunk.usage) this.usage = chunk.usage;
    for (const c of chunk.choices ?? []) {
      if ((c.index ?? 0) !== 0) continue;
      this.choices++;
      if (c.finish_reason) this.finish = c.finish_reason;
      if (c.delta) this.addDelta(c.delta);
    }
    if (this.chars > MAX_STREAM_CHARS)
      throw new ModelError("bad_response", `${this.url} streamed more than ${MAX_STREAM_CHARS} characters for one answer`, {
        url: this.url,
      });
  }

  private addDelta(d: RawMessage): void {
    const text = str(d.content);
    if (text !== undefined) {
      this.content += text;
      this.chars += text.length;
    }
    const thought = reasoningOf(d);
    if (thought) {
      this.reasoning += thought;
      this.chars += thought.length;
    }
    const refusal = str(d.refusal);
    if (refusal) {
      this.refusal += refusal;
      this.chars += refusal.length;
    }
    for (const [i, t] of (d.tool_calls ?? []).entries()) {
      const index = num(t.index) ?? i;
      let call = this.calls.get(index);
      if (!call) {
        if (this.calls.size >= MAX_TOOL_CALLS) continue;
        call = { function: { name: "", arguments: "" } };
        this.calls.set(index, call);
      }
      if (str(t.id)) call.id ??= t.id;
      if (str(t.type)) call.type ??= t.type;
      if (str(t.function?.name)) call.function.name ||= t.function?.name ?? "";
      const args = str(t.function?.arguments);
      if (args) {
        call.function.arguments += args;
        this.chars += args.length;
      }
    }
  }

  /**
   * The answer, once the stream has ended. `sawDone`: the stream's `data: [DONE]` line arrived. A stream that stopped
   * with neither that nor a finish_reason was cut (a proxy or server dropped it cleanly): a dropped connection, retried.
   */
  result(latency_ms: number, sawDone: boolean): ChatResponse {
    if (!this.finish && !sawDone)
      throw new ModelError(
        "unreachable",
        `${this.url} ended the stream for model ${this.modelName} before the answer did (no finish_reason, no [DONE]): the connection was dropped mid-answer`,
        { url: this.url },
      );
    refuseAborted(this.finish, this.url, this.modelName);
    if (this.choices === 0)
      throw new ModelError("bad_response", `${this.url} streamed no choices for model ${this.modelName}`, { url: this.url });
    const calls = [...this.calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    return response(
      {
        content: this.content || null,
        tool_calls: toolCallsOf(calls),
        reasoning: this.reasoning || undefined,
        refusal: this.refusal || undefined,
      },
      this.finish,
      usageOf(this.usage),
      this.model ?? this.modelName,
      latency_ms,
    );
  }
}
