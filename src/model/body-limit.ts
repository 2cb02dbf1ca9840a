/**
 * The most a whole response body (completion, error, model list) may hold in memory. Tens of MB, far beyond a
 * long-context answer (a 128k-token answer is well under 1 MB of JSON).
 */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * The most one event of a stream (its lines up to the blank one; a chunk is one line) may hold. Lower than a body:
 * the SDK holds an event whole, copying it again with every network read until it ends, so an endless one costs
 * time as the square of its size. A chunk is a few hundred bytes, and a whole answer in one chunk still fits.
 */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;

/**
 * A server sent more than a limit allows (an endless body, an event that never ends). Worded without "time out":
 * the SDK would report a bare timeout instead and drop this cause.
 */
export class BodyTooLarge extends Error {
  constructor(readonly what: string) {
    super(what);
    this.name = "BodyTooLarge";
  }
}

export const bodyTooLarge = (what: "body" | "event-stream event", limit: number) =>
  new BodyTooLarge(`the response ${what} passed the limit of ${Math.round(limit / (1024 * 1024))} MB and was cut off`);
