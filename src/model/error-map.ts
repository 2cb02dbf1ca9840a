import OpenAI from "openai";
import { printableText } from "../printable.ts";
import { BodyTooLarge } from "./body-limit.ts";
import { ClientTimeout } from "./client-timeout.ts";
import type { Dialect } from "./dialect.ts";
import { ModelError, redact } from "./errors.ts";
import { isOpenAIReasoningModel } from "./model-family.ts";
import { rateLimitResetMs, retryAfterMs } from "./retry-after.ts";

// Where ClientTimeout lives for the transport, which must not load the SDK with it.
export { ClientTimeout } from "./client-timeout.ts";

/**
 * A prompt that does not fit the model's window, as vLLM (renderer and engine checks, old and new wording),
 * OpenAI (`context_length_exceeded`) and other OpenAI-compatible servers say it.
 */
const CONTEXT_PATTERNS = [
  /maximum context length/i,
  /longer than the maximum model length/i,
  /context[ _]length[ _]exceeded/i,
  /exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context (?:length|window)/i,
  /too long and exceeds limit/i,
  /prompt is too long/i,
];
const WINDOW_PATTERNS = [/maximum context length (?:is|of) (\d+)/i, /maximum model length of (\d+)/i, /exceeds limit of (\d+)/i];
const PROMPT_PATTERNS = [
  /prompt contains (?:at least )?(\d+) input tokens/i,
  /\((\d+) in the messages/i,
  /messages resulted in (\d+) tokens/i,
  /request has (\d+) input tokens/i,
  /prompt \(length (\d+)\)/i,
  /prompt \((\d+) tokens\)/i,
];

const firstNumber = (text: string, patterns: RegExp[]) => {
  for (const p of patterns) {
    const m = p.exec(text);
    if (m?.[1]) return Number(m[1]);
  }
  return undefined;
};

export function isContextLengthMessage(text: string, code?: unknown): boolean {
  return code === "context_length_exceeded" || CONTEXT_PATTERNS.some((p) => p.test(text));
}

function contextLengthError(url: string, model: string, detail: string, status: number): ModelError {
  return new ModelError(
    "context_length",
    `${url} refused the prompt for "${model}" as longer than its context window (HTTP ${status}): ${detail}`,
    { url, status, contextWindow: firstNumber(detail, WINDOW_PATTERNS), promptTokens: firstNumber(detail, PROMPT_PATTERNS) },
  );
}

/**
 * The SDK's message is `<status> <server's message>`; a hone message names the status once, itself. An HTML page in
 * place of an error (a proxy's or a web server's 502 or 404 page) is shown as its title or its text.
 */
function serverMessage(err: InstanceType<typeof OpenAI.APIError>, clean: (s: string) => string): string {
  const message = String(err.message ?? "");
  const prefix = err.status ? `${err.status} ` : undefined;
  return clean(pageText(prefix && message.startsWith(prefix) ? message.slice(prefix.length) : message)).slice(0, 500);
}

/** An HTML page's title (else its text, tags dropped) with "(an HTML page)"; any other text as it is. */
function pageText(text: string): string {
  const head = text.slice(0, 2000);
  if (!/^\s*<(?:!doctype\s+html|html|head|body|title)\b/i.test(head)) return text;
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(head)?.[1];
  const words = (title ?? head.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
  return `${words.slice(0, 200) || "an empty page"} (an HTML page)`;
}

/** A server's message followed by hone's advice: one full stop between them. */
const sentence = (detail: string) => detail.replace(/\.\s*$/, "");

/** What the caller knows that the error does not say. */
export interface ErrorContext {
  /** The dialect the request was written in (unset: vllm, the client's default). */
  dialect?: Dialect;
  /** The environment variable the API key is read from, and whether it held one (a key was sent). */
  key?: { env: string; set: boolean };
}

interface Refusal {
  url: string;
  model: string;
  status: number;
  detail: string;
  code: unknown;
  opts: { url: string; status: number; retryAfterMs?: number };
}

function statusError(
  err: InstanceType<typeof OpenAI.APIError>,
  url: string,
  model: string,
  clean: (s: string) => string,
  context: ErrorContext,
) {
  // An error event inside a stream has no HTTP status; vLLM puts one in its code.
  const status = err.status ?? (typeof err.code === "number" ? err.code : 0);
  const detail = serverMessage(err, clean);
  const opts = { url, status, retryAfterMs: retryAfterMs(err.headers) };
  if (status === 401 || status === 403) return keyError(url, model, status, detail, context, opts);
  if (status === 404) {
    // A 404 that names no model is the path's (a base URL without its /v1: FastAPI's "Not Found", a web page).
    const path = !/model|deployment/i.test(detail);
    return new ModelError(
      "unknown_model",
      `${url} answered 404 for model "${model}": ${sentence(detail) || "Not Found"}. ${path ? "Check --base-url (an OpenAI-compatible API's usually ends in /v1), then " : "Check "}--model against \`hone models check\`.`,
      opts,
    );
  }
  if (status === 429) {
    const wait = opts.retryAfterMs ?? rateLimitResetMs(err.headers);
    return new ModelError("rate_limited", `${url} is rate limiting (HTTP 429): ${detail}`, { ...opts, retryAfterMs: wait });
  }
  if (status === 408) return new ModelError("timeout", `${url} timed out (HTTP 408)`, opts);
  if (status >= 500 || status === 0) return new ModelError("server_error", `${url} failed with HTTP ${status}: ${detail}`, opts);
  return requestError({ url, model, status, detail, code: err.code, opts }, context);
}

/** Where the key comes from, for the advice: the variable hone reads, and how to name another one. */
const KEY_ADVICE = "or name the variable that holds the key with --api-key-env (api_key_env in a config file)";

/**
 * A refused key (401) or a refused permission (403: a project without access to the model, a region) names the
 * variable the key was read from and whether it was set at all. A 401's own text is left out: servers quote the key
 * there (OpenAI masks all but its last characters).
 */
function keyError(
  url: string,
  model: string,
  status: number,
  detail: string,
  context: ErrorContext,
  opts: Refusal["opts"],
): ModelError {
  const env = context.key?.env ?? "OPENAI_API_KEY";
  if (context.key && !context.key.set) {
    return new ModelError(
      "unauthorized",
      `${url} refused the API key (HTTP ${status}): none was sent, as $${env} is not set. Set $${env} to the endpoint's key, ${KEY_ADVICE}.`,
      opts,
    );
  }
  if (status === 403) {
    return new ModelError(
      "unauthorized",
      `${url} refused access to model "${model}" with the key in $${env} (HTTP 403): ${sentence(detail) || "forbidden"}. Check what the key may use, ${KEY_ADVICE}.`,
      opts,
    );
  }
  return new ModelError(
    "unauthorized",
    `${url} refused the API key (HTTP 401) read from $${env}. Check the key it holds, ${KEY_ADVICE}.`,
    opts,
  );
}

/** A 4xx other than the key, the model's name and rate limits: what about the request the server refused. */
function requestError(r: Refusal, context: ErrorContext): ModelError {
  const { url, model, status, detail, opts } = r;
  if (isContextLengthMessage(detail, r.code)) return contextLengthError(url, model, detail, status);
  if (isWrongDialect(r, context)) {
    return new ModelError(
      "bad_request",
      `${url} rejected the request (HTTP ${status}): ${sentence(detail)}. "${model}" is an OpenAI reasoning model, which refuses the vllm dialect's sampling fields: use --dialect openai.`,
      opts,
    );
  }
  if (/tool/i.test(detail) && /(auto|choice|support|enable)/i.test(detail)) {
    return new ModelError(
      "no_tool_support",
      `${url} does not accept tool calls for "${model}": ${sentence(detail)}. For vLLM start the server with --enable-auto-tool-choice --tool-call-parser <parser>.`,
      opts,
    );
  }
  if (/model/i.test(detail) && /(not exist|not found|unknown|does not)/i.test(detail)) {
    return new ModelError("unknown_model", `${url} does not serve model "${model}": ${detail}`, opts);
  }
  return new ModelError("bad_request", `${url} rejected the request (HTTP ${status}): ${detail}`, opts);
}

/** OpenAI refusing a parameter of the vllm dialect (max_tokens, temperature…) for one of its reasoning models. */
function isWrongDialect(r: Refusal, context: ErrorContext): boolean {
  if ((context.dialect ?? "vllm") !== "vllm" || !isOpenAIReasoningModel(r.model)) return false;
  return r.code === "unsupported_parameter" || r.code === "unsupported_value" || /unsupported (parameter|value)/i.test(r.detail);
}

/** What to do about a connection that failed, from the network error's code. */
function connectAdvice(cause: unknown, url: string): string {
  const code = String((cause as { code?: unknown } | undefined)?.code ?? "");
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return "The host name in --base-url does not resolve: check its spelling and the network.";
  if (code === "EPROTO" || code.startsWith("ERR_SSL_"))
    return url.startsWith("https:")
      ? "The server did not answer in TLS: if it serves plain HTTP, use http:// in --base-url."
      : "The connection failed in TLS: check --base-url's scheme and port.";
  if (/CERT|UNABLE_TO_(GET|VERIFY)|ERR_TLS_/.test(code))
    return "The server's TLS certificate was not accepted: for a private CA or a self-signed certificate, give its PEM file in NODE_EXTRA_CA_CERTS.";
  return "Is the server running, and is --base-url right?";
}

/**
 * Maps SDK and network errors to a ModelError whose message says what to do; never includes a secret (the API key,
 * a password in the base URL: `secrets`).
 */
export function toModelError(
  err: unknown,
  url: string,
  model: string,
  secrets: readonly (string | undefined)[] = [],
  context: ErrorContext = {},
): ModelError {
  if (err instanceof ModelError) return err;
  // A server's text is the server's: no secret in it (it may echo the key), and no control character (ESC) reaches a terminal.
  const clean = (s: string) => printableText(redact(s, secrets));
  const cause = err instanceof Error ? err.cause : undefined;
  const timer = err instanceof ClientTimeout ? err : cause instanceof ClientTimeout ? cause : undefined;
  if (timer) return new ModelError("timeout", `request to ${url} failed: ${timer.what}`, { url });
  const tooLarge = err instanceof BodyTooLarge ? err : cause instanceof BodyTooLarge ? cause : undefined;
  if (tooLarge) return new ModelError("bad_response", `${url} sent too much: ${tooLarge.what}`, { url });
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelError("timeout", `request to ${url} timed out`, { url });
  }
  if (err instanceof OpenAI.APIUserAbortError) {
    return new ModelError("timeout", `request to ${url} was aborted (rollout time limit)`, { url });
  }
  if (err instanceof OpenAI.APIConnectionError) {
    const why = clean(String(err.cause ?? err.message))
      .trim()
      .slice(0, 300);
    return new ModelError("unreachable", `cannot reach ${url}: ${sentence(why)}. ${connectAdvice(err.cause, url)}`, { url });
  }
  if (err instanceof OpenAI.APIError) return statusError(err, url, model, clean, context);
  const message = clean(err instanceof Error ? err.message : String(err)).slice(0, 300);
  // The SDK reading a body that is not JSON, or nested past what it can write out again (its error messages).
  if (err instanceof SyntaxError || err instanceof RangeError)
    return new ModelError("bad_response", `${url} sent an answer hone cannot read: ${message}`, { url });
  return new ModelError("unreachable", `request to ${url} failed: ${message}`, { url });
}
