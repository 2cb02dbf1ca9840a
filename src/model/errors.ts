/** Why a model call failed, in words a user can act on. `retryable` drives the retry wrapper. */
export type ModelFailureKind =
  | "unreachable"
  | "timeout"
  | "rate_limited"
  | "server_error"
  | "unauthorized"
  | "unknown_model"
  | "bad_request"
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

export class ModelError extends Error {
  readonly kind: ModelFailureKind;
  readonly status?: number;
  readonly url: string;
  readonly retryAfterMs?: number;
  constructor(kind: ModelFailureKind, message: string, opts: { url: string; status?: number; retryAfterMs?: number }) {
    super(message);
    this.name = "ModelError";
    this.kind = kind;
    this.url = opts.url;
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
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
