/**
 * How long a server asks a client to wait before trying again, in ms: `retry-after-ms` first (Azure OpenAI sends it,
 * and the OpenAI SDK reads it before the standard header), else `Retry-After` in seconds or as an HTTP date.
 * Undefined when the server says neither. How much of it is honoured is the retry policy's business (retry.ts).
 */
export function retryAfterMs(headers: unknown): number | undefined {
  const ms = Number.parseFloat(header(headers, "retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const v = header(headers, "retry-after")?.trim();
  if (!v) return undefined;
  const secs = Number(v);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(v);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

function header(headers: unknown, name: string): string | undefined {
  if (headers && typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  if (headers && typeof headers === "object") {
    const v = (headers as Record<string, unknown>)[name];
    return typeof v === "string" ? v : undefined;
  }
  return undefined;
}

/**
 * On a 429 that names no wait: when OpenAI's limits reset, in ms, from its `x-ratelimit-reset-requests` and
 * `x-ratelimit-reset-tokens` (durations such as `1s`, `6m0s`, `20ms`). The limit its `x-ratelimit-remaining-*`
 * says is spent decides; with neither said to be spent, the later reset. Undefined when the server sends neither.
 */
export function rateLimitResetMs(headers: unknown): number | undefined {
  const limits = ["requests", "tokens"].map((name) => ({
    reset: durationMs(header(headers, `x-ratelimit-reset-${name}`)),
    spent: header(headers, `x-ratelimit-remaining-${name}`)?.trim() === "0",
  }));
  const known = limits.filter((l) => l.reset !== undefined);
  const spent = known.filter((l) => l.spent);
  const waits = (spent.length > 0 ? spent : known).map((l) => l.reset as number);
  return waits.length > 0 ? Math.max(...waits) : undefined;
}

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/** A Go-style duration (`1h2m3.5s`, `250ms`) or a bare number of seconds, in ms; undefined when it is neither. */
function durationMs(text: string | undefined): number | undefined {
  const v = text?.trim();
  if (!v) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(v)) return Number(v) * 1000;
  if (!/^(?:\d+(?:\.\d+)?(?:h|ms|m|s|us|µs|ns))+$/.test(v)) return undefined;
  let ms = 0;
  for (const [, n, unit] of v.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) ms += Number(n) * (UNIT_MS[unit as string] ?? 0);
  return Number.isFinite(ms) ? ms : undefined;
}
