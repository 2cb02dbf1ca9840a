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
