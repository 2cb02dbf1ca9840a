import { bodyTooLarge, MAX_EVENT_BYTES } from "./body-limit.ts";

const LF = 0x0a;
const CR = 0x0d;
/** Enough of a line's start to recognise the end marker (`data: [DONE]`, or `data:[DONE]`). */
const HEAD_BYTES = 16;
const DONE_LINE = /^data: ?\[DONE\]/;

/**
 * Watches an event stream's bytes as they pass, line by line (LF, CR or CRLF): refuses an event (the lines up to a
 * blank one) longer than the limit, which the SDK would hold whole waiting for its end, and notes the `data: [DONE]`
 * line that closes an OpenAI-style stream, so a stream that merely stopped can be told from one that ended.
 */
export class EventStreamWatch {
  /** Whether the stream's `data: [DONE]` line has arrived. */
  done = false;
  private lineBytes = 0;
  private eventBytes = 0;
  private head = "";
  /** The last byte seen was a CR, so an LF right after it ends no further line. */
  private afterCR = false;

  constructor(private readonly limit = MAX_EVENT_BYTES) {}

  /** Throws BodyTooLarge when the current event passes the limit. */
  feed(chunk: Uint8Array): void {
    const breaks = new Breaks(chunk);
    let start = 0;
    while (start < chunk.length) {
      const end = breaks.next(start);
      this.take(chunk, start, end === -1 ? chunk.length : end);
      if (end === -1) break;
      if (!(chunk[end] === LF && end === start && this.afterCR)) this.endLine();
      this.afterCR = chunk[end] === CR;
      start = end + 1;
    }
    if (this.eventBytes > this.limit) throw bodyTooLarge("event-stream event", this.limit);
  }

  private take(chunk: Uint8Array, from: number, to: number): void {
    if (to === from) return;
    this.afterCR = false;
    if (this.head.length < HEAD_BYTES)
      this.head += Buffer.from(chunk.buffer, chunk.byteOffset + from, Math.min(to - from, HEAD_BYTES)).toString("latin1");
    this.lineBytes += to - from;
    this.eventBytes += to - from;
  }

  private endLine(): void {
    if (DONE_LINE.test(this.head)) this.done = true;
    if (this.lineBytes === 0) this.eventBytes = 0;
    this.head = "";
    this.lineBytes = 0;
  }
}

/** The line breaks of one chunk in order; each byte is searched once for LF and once for CR. */
class Breaks {
  private lf = -2;
  private cr = -2;
  constructor(private readonly chunk: Uint8Array) {}

  next(from: number): number {
    if (this.lf !== -1 && this.lf < from) this.lf = this.chunk.indexOf(LF, from);
    if (this.cr !== -1 && this.cr < from) this.cr = this.chunk.indexOf(CR, from);
    if (this.lf === -1) return this.cr;
    return this.cr === -1 ? this.lf : Math.min(this.lf, this.cr);
  }
}
