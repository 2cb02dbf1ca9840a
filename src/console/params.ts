import type { Context } from "hono";

/** A query parameter read as a whole number, or the message a 400 answer gives. */
export type Parsed<T> = { value: T } | { error: string };

const WHOLE = /^(0|[1-9][0-9]{0,11})$/;
const shown = (raw: string) => JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);

/** Only plain decimal digits in range: "1e308", "-1", "2.5", "0x10", " 3" and "" are all refused, with the value named. */
export function whole(raw: string | undefined, name: string, o: { fallback?: number; min: number; max: number }): Parsed<number> {
  if (raw === undefined && o.fallback !== undefined) return { value: o.fallback };
  const n = raw !== undefined && WHOLE.test(raw) ? Number(raw) : Number.NaN;
  if (n >= o.min && n <= o.max) return { value: n };
  // Built only for an answer of 400 (toLocaleString loads ICU data on first use: 20 ms on a cold start).
  const range = `a whole number from ${o.min} to ${o.max.toLocaleString("en-US")}`;
  if (raw === undefined) return { error: `${name} is required: ${range}` };
  return { error: `${name} must be ${range} (got ${shown(raw)})` };
}

/** `offset` and `limit` of a paginated list. */
export function page(c: Context, defaultLimit = 100, maxLimit = 1000): Parsed<{ offset: number; limit: number }> {
  const offset = whole(c.req.query("offset"), "offset", { fallback: 0, min: 0, max: 1_000_000_000 });
  if ("error" in offset) return offset;
  const limit = whole(c.req.query("limit"), "limit", { fallback: defaultLimit, min: 1, max: maxLimit });
  if ("error" in limit) return limit;
  return { value: { offset: offset.value, limit: limit.value } };
}

export const badRequest = (c: Context, error: string) => c.json({ error }, 400);
