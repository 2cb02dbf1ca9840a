import { ModelError } from "./errors.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.ts";

export interface RetryPolicy {
  /** Total attempts, first included. */
  maxAttempts: number;
  baseDelayMs: number;
  /** Cap on hone's own backoff. */
  maxDelayMs: number;
  /**
   * Cap on a wait the server asks for (Retry-After, retry-after-ms), honoured above `maxDelayMs` up to this (the
   * OpenAI SDK honours up to 60 s); the call's `totalMs` bounds it too. Unset: `maxDelayMs`.
   */
  maxServerDelayMs?: number;
  /** Cap on one call, every attempt and backoff included (the `total` timeout); unset: no cap. */
  totalMs?: number;
  /** Uniform random in [0,1); injectable so tests are deterministic. */
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  onRetry?: (info: { attempt: number; delayMs: number; error: ModelError }) => void;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxServerDelayMs: 60_000,
};

/**
 * Exponential backoff with full jitter, honouring a server's Retry-After when it asks for longer, up to the policy's
 * cap on a server's wait.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, retryAfterMs?: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = cap * (policy.random ?? Math.random)();
  const asked = Math.min(retryAfterMs ?? 0, policy.maxServerDelayMs ?? policy.maxDelayMs);
  return Math.max(jittered, asked);
}

/**
 * Waits `ms`, or less once `signal` aborts (the call's total, the rollout's deadline, a stop): a server may ask for a
 * minute, which must not hold a rollout past its end. The next attempt then sees the signal and ends the call.
 */
function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Bounded retries on 429, 5xx, timeouts, dropped connections and empty completions; other errors pass through. */
export function withRetries(model: ChatModel, policy: RetryPolicy = defaultRetryPolicy): ChatModel {
  return {
    id: model.id,
    wireBody: model.wireBody?.bind(model),
    async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResponse> {
      const started = performance.now();
      const faults: { kind: string; message: string }[] = [];
      const cap = callCap(policy.totalMs, signal, model);
      try {
        for (let attempt = 1; ; attempt++) {
          try {
            const res = await model.complete(request, cap.signal);
            return { ...res, attempts: attempt, latency_ms: performance.now() - started, ...(faults.length ? { faults } : {}) };
          } catch (raw) {
            const err = cap.reached() ? cap.error(faults.at(-1)?.message, attempt) : raw;
            if (err instanceof ModelError) faults.push({ kind: err.kind, message: err.message.slice(0, 300) });
            if (
              !(err instanceof ModelError) ||
              !err.retryable ||
              cap.reached() ||
              attempt >= policy.maxAttempts ||
              signal?.aborted
            ) {
              if (err instanceof ModelError && err.retryable && attempt >= policy.maxAttempts && !cap.reached()) {
                throw new ModelError(err.kind, `${err.message} (gave up after ${attempt} attempts)`, err);
              }
              throw err;
            }
            const delayMs = backoffDelay(attempt, policy, err.retryAfterMs);
            if (cap.left() <= delayMs) throw cap.error(err.message, attempt);
            policy.onRetry?.({ attempt, delayMs, error: err });
            await (policy.sleep ?? realSleep)(delayMs, cap.signal);
          }
        }
      } finally {
        cap.dispose();
      }
    },
  };
}

/** The `total` limit of one call as a signal for its attempts, joined with the caller's (the rollout's deadline). */
function callCap(totalMs: number | undefined, outer: AbortSignal | undefined, model: ChatModel) {
  const error = (lastFault: string | undefined, attempts: number) =>
    new ModelError(
      "timeout",
      `no answer within the call's total timeout of ${(totalMs ?? 0) / 1000} s (${attempts} attempt(s))${lastFault ? `; last fault: ${lastFault}` : ""}`,
      { url: model.id },
    );
  if (totalMs === undefined)
    return { signal: outer, reached: () => false, left: () => Number.POSITIVE_INFINITY, error, dispose() {} };
  const controller = new AbortController();
  const end = performance.now() + totalMs;
  let reached = false;
  const onOuter = () => controller.abort();
  outer?.addEventListener("abort", onOuter, { once: true });
  if (outer?.aborted) controller.abort();
  const timer = setTimeout(() => {
    reached = true;
    controller.abort();
  }, totalMs);
  return {
    signal: controller.signal,
    reached: () => reached,
    left: () => end - performance.now(),
    error,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}
