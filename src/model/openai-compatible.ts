import OpenAI from "openai";
import { buildRequestBody, type Dialect } from "./dialect.ts";
import { ModelError, redact } from "./errors.ts";
import { nodeFetch } from "./http-transport.ts";
import type { ChatModel, ChatRequest, ChatResponse, ToolCall } from "./types.ts";

export interface EndpointOptions {
  baseUrl: string;
  model: string;
  dialect?: Dialect;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). Never the key itself. */
  apiKeyEnv?: string;
  keepSampling?: boolean;
  /** Per-request timeout. */
  timeoutMs?: number;
}

/** Local servers accept any key; sending a placeholder keeps the client happy without inventing a secret. */
const NO_KEY = "no-key";

export function apiKeyFrom(env: NodeJS.ProcessEnv, name = "OPENAI_API_KEY"): string | undefined {
  const v = env[name];
  return v && v.length > 0 ? v : undefined;
}

/** One OpenAI-compatible endpoint, called through the `openai` package with its own retries off (see retry.ts). */
export class OpenAICompatibleModel implements ChatModel {
  readonly id: string;
  private readonly client: OpenAI;
  private readonly apiKey: string | undefined;
  private readonly opts: EndpointOptions;

  constructor(opts: EndpointOptions, env: NodeJS.ProcessEnv = process.env) {
    this.opts = opts;
    this.id = `${opts.baseUrl}#${opts.model}`;
    this.apiKey = apiKeyFrom(env, opts.apiKeyEnv);
    this.client = new OpenAI({
      apiKey: this.apiKey ?? NO_KEY,
      baseURL: opts.baseUrl,
      maxRetries: 0,
      timeout: opts.timeoutMs ?? 600_000,
      fetch: nodeFetch,
    });
  }

  get dialect(): Dialect {
    return this.opts.dialect ?? "vllm";
  }

  /** The exact body sent for a request; cache keys hash it. */
  wireBody(request: ChatRequest): Record<string, unknown> {
    return buildRequestBody(request, { dialect: this.dialect, model: this.opts.model, keepSampling: this.opts.keepSampling });
  }

  async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResponse> {
    const body = this.wireBody(request);
    const started = performance.now();
    let raw: OpenAI.Chat.Completions.ChatCompletion;
    try {
      // The body may carry vLLM fields the SDK's types do not know; the SDK sends the object as given.
      raw = (await this.client.chat.completions.create(
        body as unknown as OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming,
        { signal },
      )) as OpenAI.Chat.Completions.ChatCompletion;
    } catch (err) {
      throw toModelError(err, this.chatUrl, this.opts.model, this.apiKey);
    }
    const latency_ms = performance.now() - started;
    return parseCompletion(raw, this.chatUrl, this.opts.model, latency_ms);
  }

  async listModels(): Promise<string[]> {
    try {
      const page = await this.client.models.list();
      const ids: string[] = [];
      for await (const m of page) ids.push(m.id);
      return ids;
    } catch (err) {
      throw toModelError(err, `${this.opts.baseUrl.replace(/\/$/, "")}/models`, this.opts.model, this.apiKey);
    }
  }

  private get chatUrl(): string {
    return `${this.opts.baseUrl.replace(/\/$/, "")}/chat/completions`;
  }
}

export function parseCompletion(
  raw: OpenAI.Chat.Completions.ChatCompletion,
  url: string,
  model: string,
  latency_ms: number,
): ChatResponse {
  const choice = raw?.choices?.[0];
  if (!choice?.message) {
    throw new ModelError("bad_response", `${url} returned a completion with no choices for model ${model}`, { url });
  }
  const tool_calls: ToolCall[] = (choice.message.tool_calls ?? [])
    .filter((c) => c.type === "function")
    .map((c, i) => {
      const fn = (c as { function: { name: string; arguments?: string } }).function;
      return {
        id: c.id || `call_${i}`,
        type: "function" as const,
        function: { name: fn.name, arguments: fn.arguments ?? "" },
      };
    });
  const usage = raw.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return {
    message: { content: choice.message.content ?? null, tool_calls },
    finish_reason: choice.finish_reason ?? "stop",
    usage: {
      prompt_tokens: usage.prompt_tokens ?? 0,
      completion_tokens: usage.completion_tokens ?? 0,
      total_tokens: usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0),
    },
    latency_ms,
    attempts: 1,
    model: raw.model ?? model,
  };
}

function retryAfterMs(headers: unknown): number | undefined {
  let v: string | null | undefined;
  if (headers && typeof (headers as Headers).get === "function") v = (headers as Headers).get("retry-after");
  else if (headers && typeof headers === "object") v = (headers as Record<string, string>)["retry-after"];
  if (!v) return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(v);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** Maps SDK and network errors to a ModelError whose message says what to do; never includes the key. */
export function toModelError(err: unknown, url: string, model: string, apiKey?: string): ModelError {
  if (err instanceof ModelError) return err;
  const clean = (s: string) => redact(s, [apiKey]);
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelError("timeout", `request to ${url} timed out`, { url });
  }
  if (err instanceof OpenAI.APIUserAbortError) {
    return new ModelError("timeout", `request to ${url} was aborted (rollout time limit)`, { url });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return new ModelError(
      "unreachable",
      `cannot reach ${url}: ${clean(String(err.cause ?? err.message))}. Is the server running, and is --base-url right?`,
      { url },
    );
  }
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? 0;
    const detail = clean(String(err.message ?? "")).slice(0, 500);
    const opts = { url, status, retryAfterMs: retryAfterMs(err.headers) };
    if (status === 401 || status === 403) {
      return new ModelError(
        "unauthorized",
        `${url} refused the API key (HTTP ${status}). Set the key in the environment variable named by --api-key-env (default OPENAI_API_KEY).`,
        opts,
      );
    }
    if (status === 404) {
      return new ModelError(
        "unknown_model",
        `${url} answered 404 for model "${model}": ${detail}. Check --model against \`hone models check\`.`,
        opts,
      );
    }
    if (status === 429) return new ModelError("rate_limited", `${url} is rate limiting (HTTP 429): ${detail}`, opts);
    if (status === 408) return new ModelError("timeout", `${url} timed out (HTTP 408)`, opts);
    if (status >= 500) return new ModelError("server_error", `${url} failed with HTTP ${status}: ${detail}`, opts);
    if (/tool/i.test(detail) && /(auto|choice|support|enable)/i.test(detail)) {
      return new ModelError(
        "no_tool_support",
        `${url} does not accept tool calls for "${model}": ${detail}. For vLLM start the server with --enable-auto-tool-choice --tool-call-parser <parser>.`,
        opts,
      );
    }
    if (/model/i.test(detail) && /(not exist|not found|unknown|does not)/i.test(detail)) {
      return new ModelError("unknown_model", `${url} does not serve model "${model}": ${detail}`, opts);
    }
    return new ModelError("bad_request", `${url} rejected the request (HTTP ${status}): ${detail}`, opts);
  }
  const message = clean(err instanceof Error ? err.message : String(err));
  return new ModelError("unreachable", `request to ${url} failed: ${message}`, { url });
}
