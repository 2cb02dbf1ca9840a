/** Why a model call failed, in words a user can act on. `retryable` drives the retry wrapper. */
export type ModelFailureKind =
  | "unreachable"
  | "timeout"
  | "rate_limited"
  | "server_error"
  | "unauthorized"
  | "unknown_model"
  | "bad_request"
  | "context_length"
  | "no_tool_support"
  | "bad_response"
  | "replay_miss";

const RETRYABLE: ReadonlySet<ModelFailureKind> = new Set([
  "unreachable",
  "timeout",
  "rate_limited",
  "server_error",
  "bad_response",
]);

export interface ModelErrorOptions {
  url: string;
  status?: number;
  retryAfterMs?: number;
  contextWindow?: number;
  promptTokens?: number;
}

/**
 * A model call failed. `context_length` (the prompt does not fit the model's window) is not retried as it is:
 * the agent loop compacts the conversation and tries once more.
 */
export class ModelError extends Error {
  readonly kind: ModelFailureKind;
  readonly status?: number;
  readonly url: string;
  readonly retryAfterMs?: number;
  /** For `context_length`: the window and the prompt's size in tokens, where the server's message says them. */
  readonly contextWindow?: number;
  readonly promptTokens?: number;
  constructor(kind: ModelFailureKind, message: string, opts: ModelErrorOptions) {
    super(message);
    this.name = "ModelError";
    this.kind = kind;
    this.url = opts.url;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
    this.contextWindow = opts.contextWindow;
    this.promptTokens = opts.promptTokens;
  }
  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

/** Removes every occurrence of a secret from a text, so no error message or record can carry it. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join("[redacted]");
  return out;
}
