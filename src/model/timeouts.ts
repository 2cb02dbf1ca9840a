/**
 * How long a model call may take, in seconds. Distinct limits so a stalled server fails fast while a long answer
 * still has time:
 * - `connect`: opening the TCP/TLS connection;
 * - `first_byte`: streamed calls only, from sending the request to the first chunk (queueing and prefill);
 * - `idle`: streamed calls only, the longest gap between two chunks;
 * - `attempt`: one request from start to its last byte (a non-streamed call gets its whole answer at once, so
 *   this is its only stall detector);
 * - `total`: one call with every retry and backoff, the cap on what a stalled server can cost a rollout.
 * connect, first_byte, idle and attempt failures are retryable `timeout` faults; reaching `total` ends the call.
 */
export interface Timeouts {
  connect: number;
  first_byte: number;
  idle: number;
  attempt: number;
  total: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { connect: 10, first_byte: 60, idle: 30, attempt: 300, total: 600 };

const NAMES = Object.keys(DEFAULT_TIMEOUTS) as (keyof Timeouts)[];

export function resolveTimeouts(t: Partial<Timeouts> | undefined): Timeouts {
  return { ...DEFAULT_TIMEOUTS, ...Object.fromEntries(Object.entries(t ?? {}).filter(([, v]) => v !== undefined)) };
}

/** `connect=5,idle=1.5` (the CLI's --timeouts). Unknown names and non-positive numbers are errors. */
export function parseTimeouts(spec: string): Partial<Timeouts> {
  const out: Partial<Timeouts> = {};
  for (const part of spec
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, value, extra] = part.split("=");
    if (!NAMES.includes(name as keyof Timeouts) || value === undefined || extra !== undefined)
      throw new Error(`"${part}" is not NAME=SECONDS with NAME one of ${NAMES.join(", ")}`);
    const secs = Number(value);
    if (!Number.isFinite(secs) || secs <= 0 || secs > 86_400)
      throw new Error(`${name}=${value}: give a number of seconds above 0 and at most 86400`);
    out[name as keyof Timeouts] = secs;
  }
  return out;
}
