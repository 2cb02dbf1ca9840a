import { type ClientRequest, Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import { pipeline, type Readable, type Transform } from "node:stream";
import { constants, createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { bodyTooLarge, MAX_BODY_BYTES } from "./body-limit.ts";
import { ClientTimeout } from "./client-timeout.ts";
import { EventStreamWatch } from "./sse-watch.ts";

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 256 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 256 });

export interface TransportOptions {
  /** Time to open the TCP (and TLS) connection; a reused keep-alive socket skips it. */
  connectTimeoutMs?: number;
}

/**
 * A `fetch` for the openai SDK over node:http(s) with keep-alive sockets. Node 20's built-in fetch (undici) costs
 * about 0.6 ms more per loopback call, which dominates an agent step against a local server (see bench/).
 * Supports what the SDK uses: method, headers, a string or byte body, and an AbortSignal. A successful
 * `text/event-stream` answer is handed over as it arrives (streamed completions); any other answer is read whole.
 */
export function nodeFetchWith(t: TransportOptions = {}): typeof fetch {
  return (input, init) =>
    new Promise((resolve, reject) => {
      const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) {
        reject(signal.reason ?? new DOMException("aborted", "AbortError"));
        return;
      }
      const headers = plainHeaders(init?.headers);
      const body = init?.body;
      let payload: Buffer | undefined;
      if (typeof body === "string") payload = Buffer.from(body);
      else if (body instanceof Uint8Array) payload = Buffer.from(body);
      else if (body instanceof ArrayBuffer) payload = Buffer.from(body);
      else if (body != null) {
        // Streams and form data are not used by chat completions; hand them to the platform fetch.
        fetch(input, init).then(resolve, reject);
        return;
      }
      if (payload) headers["content-length"] = String(payload.length);
      const https = url.protocol === "https:";
      const req = (https ? httpsRequest : httpRequest)(
        url,
        { method: init?.method ?? "GET", headers, agent: https ? httpsAgent : httpAgent },
        (res) => {
          const status = res.statusCode ?? 500;
          const h = responseHeaders(res);
          const body = decodedBody(res);
          if (body instanceof Error) {
            res.destroy();
            reject(body);
            return;
          }
          const ok = status >= 200 && status < 300 && status !== 204;
          if (ok && isEventStream(res)) {
            const watch = new EventStreamWatch();
            const response = new Response(eventStream(res, body, watch), { status, statusText: res.statusMessage, headers: h });
            streamWatches.set(response, watch);
            resolve(response);
            return;
          }
          readWhole(res, body).then((bytes) => {
            if (ok) {
              resolve(lightResponse(url.href, status, res.statusMessage ?? "", h, bytes));
              return;
            }
            const nullBody = status === 204 || status === 304;
            resolve(new Response(nullBody ? null : errorBody(bytes), { status, statusText: res.statusMessage, headers: h }));
          }, reject);
        },
      );
      const onAbort = () => req.destroy(Object.assign(new Error("The operation was aborted."), { name: "AbortError" }));
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("close", () => signal?.removeEventListener("abort", onAbort));
      req.on("error", reject);
      if (t.connectTimeoutMs) limitConnect(req, https, t.connectTimeoutMs);
      req.end(payload);
    });
}

/** A media type is case-insensitive (RFC 9110 §8.3.1): `Text/Event-Stream` is a stream too. */
const isEventStream = (res: IncomingMessage) =>
  String(res.headers["content-type"] ?? "")
    .trimStart()
    .toLowerCase()
    .startsWith("text/event-stream");

/** Each content coding as fetch undoes it (undici's flush settings: a cut body is the connection's fault, seen there). */
const DECODERS: Record<string, () => Transform> = {
  gzip: () => createGunzip({ flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH }),
  "x-gzip": () => createGunzip({ flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH }),
  deflate: () => createInflate({ flush: constants.Z_SYNC_FLUSH, finishFlush: constants.Z_SYNC_FLUSH }),
  br: () => createBrotliDecompress({ flush: constants.BROTLI_OPERATION_FLUSH, finishFlush: constants.BROTLI_OPERATION_FLUSH }),
};

/**
 * The body's bytes as the server meant them: undone from the content codings it names (a request without
 * Accept-Encoding accepts any, RFC 9110 §12.5.3, and fetch, which this replaces, decodes them), so the limits count
 * decoded bytes. A coding hone cannot undo is an error naming it.
 */
function decodedBody(res: IncomingMessage): Readable | Error {
  const codings = String(res.headers["content-encoding"] ?? "")
    .toLowerCase()
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return res;
  const unknown = codings.find((c) => !DECODERS[c]);
  if (unknown) return new Error(`the server sent its answer with content-encoding "${unknown}", which hone cannot decode`);
  const decoders = codings.reverse().map((c) => (DECODERS[c] as () => Transform)());
  pipeline([res, ...decoders], () => {
    // Errors reach the last decoder, whose reader reports them.
  });
  return decoders[decoders.length - 1] as Transform;
}

/** A whole body, at most `MAX_BODY_BYTES` of it: a longer one is cut off (the connection closed) and refused. */
function readWhole(res: IncomingMessage, body: Readable, limit = MAX_BODY_BYTES): Promise<Buffer<ArrayBuffer>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= limit) chunks.push(c);
      else {
        reject(bodyTooLarge("body", limit));
        res.destroy();
      }
    });
    body.on("error", reject);
    if (body !== res) res.on("error", reject);
    // A connection reset mid-body ends the response without "end"; that is a dropped connection, retried.
    res.on("close", () => {
      if (!res.complete) reject(Object.assign(new Error("the connection was reset mid-response"), { code: "ECONNRESET" }));
    });
    body.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

const streamWatches = new WeakMap<Response, EventStreamWatch>();

/**
 * Whether an event-stream response of this transport has passed its `data: [DONE]` line; undefined for a response it
 * did not stream. The SDK swallows that line, so this is how a stream that ended is told from one that just stopped.
 */
export function streamSawDone(response: Response): boolean | undefined {
  return streamWatches.get(response)?.done;
}

/** The transport with no connect limit of its own (the SDK's timeout still bounds every request). */
export const nodeFetch: typeof fetch = nodeFetchWith();

/** Worded without "time out": the SDK would report a bare "Request timed out." instead and drop this cause. */
export const connectLimitMessage = (ms: number) => `no connection within the connect limit of ${ms / 1000} s`;

function limitConnect(req: ClientRequest, https: boolean, ms: number): void {
  req.on("socket", (socket: Socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(() => req.destroy(new ClientTimeout(connectLimitMessage(ms))), ms);
    socket.once(https ? "secureConnect" : "connect", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
  });
}

function responseHeaders(res: IncomingMessage): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (Array.isArray(v)) for (const x of v) h.append(k, x);
    else if (v !== undefined) h.set(k, v);
  }
  return h;
}

/**
 * The response body as a web stream, chunk by chunk, each chunk shown to `watch` first (which refuses a line that
 * never ends); a reset connection errors the stream.
 */
function eventStream(res: IncomingMessage, body: Readable, watch: EventStreamWatch): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const fail = (err: Error) => {
        if (done) return;
        done = true;
        controller.error(err);
      };
      body.on("data", (c: Buffer) => {
        if (done) return;
        try {
          watch.feed(c);
        } catch (err) {
          fail(err as Error);
          res.destroy();
          return;
        }
        controller.enqueue(new Uint8Array(c.buffer, c.byteOffset, c.byteLength));
      });
      body.on("end", () => {
        if (done) return;
        done = true;
        controller.close();
      });
      body.on("error", fail);
      if (body !== res) res.on("error", fail);
      res.on("close", () => {
        if (!res.complete) fail(Object.assign(new Error("the connection was reset mid-stream"), { code: "ECONNRESET" }));
      });
    },
    cancel() {
      done = true;
      res.destroy();
    },
  });
}

/**
 * Error bodies in the shape the SDK reads (`{"error": {"message": "…", …}}`), flat: the SDK would report anything
 * else as "status code (no body)" (older vLLM's top-level `{"object": "error", "message": …}`, FastAPI's
 * `{"detail": "Not Found"}` for a path vLLM does not serve) or write it out whole with JSON.stringify, which a
 * deeply nested value overflows. A body that is not JSON is left as it is: the SDK passes its text on as the message.
 */
function errorBody(bytes: Buffer<ArrayBuffer>): Buffer<ArrayBuffer> {
  if (bytes.length === 0) return bytes;
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString("utf8"));
  } catch {
    return bytes;
  }
  const top = isRecord(v) ? v : {};
  const e = isRecord(top.error) ? top.error : typeof top.error === "string" ? { message: top.error } : top;
  const said = e.message ?? (e === top ? top.detail : undefined);
  const message = typeof said === "string" ? said : said !== undefined ? shortJson(said) : shortJson(v);
  const flat = { message, type: primitive(e.type), param: primitive(e.param) ?? null, code: primitive(e.code) };
  return Buffer.from(JSON.stringify({ error: flat }));
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const primitive = (v: unknown) => (v === null || ["string", "number", "boolean"].includes(typeof v) ? v : undefined);

/** A JSON value written out to at most 500 characters and 20 levels (deeper levels as `…`), never overflowing. */
function shortJson(v: unknown, limit = 500): string {
  let out = "";
  const put = (s: string) => {
    out += s;
    return out.length < limit;
  };
  const walk = (x: unknown, depth: number): boolean => {
    if (!x || typeof x !== "object") return put(JSON.stringify(x) ?? "null");
    if (depth >= 20) return put("…");
    const list = Array.isArray(x);
    const keys = list ? undefined : Object.keys(x);
    const n = keys ? keys.length : (x as unknown[]).length;
    if (!put(list ? "[" : "{")) return false;
    for (let i = 0; i < n; i++) {
      const k = keys?.[i];
      if (i > 0 && !put(",")) return false;
      if (k !== undefined && !put(`${JSON.stringify(k)}:`)) return false;
      if (!walk(k !== undefined ? (x as Record<string, unknown>)[k] : (x as unknown[])[i], depth + 1)) return false;
    }
    return put(list ? "]" : "}");
  };
  walk(v, 0);
  return out.length > limit ? `${out.slice(0, limit)}…` : out;
}

function plainHeaders(h: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  if (h instanceof Headers) {
    for (const [k, v] of h) out[k] = v;
  } else if (Array.isArray(h)) {
    for (const [k, v] of h) out[k.toLowerCase()] = v;
  } else {
    for (const [k, v] of Object.entries(h)) if (v !== undefined && v !== null) out[k.toLowerCase()] = String(v);
  }
  return out;
}

/**
 * The parts of a Response the SDK reads on a successful call (status, headers, json/text), without the cost of
 * building a full undici Response; error responses get a real Response.
 */
function lightResponse(url: string, status: number, statusText: string, headers: Headers, bytes: Buffer): Response {
  let used = false;
  const take = () => {
    if (used) throw new TypeError("Body is unusable: Body has already been read");
    used = true;
    return bytes.toString("utf8");
  };
  const light = {
    ok: true,
    status,
    statusText,
    url,
    headers,
    redirected: false,
    type: "basic" as ResponseType,
    body: null,
    get bodyUsed() {
      return used;
    },
    text: async () => take(),
    json: async () => JSON.parse(take()),
    arrayBuffer: async () => {
      take();
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    },
    clone: () => lightResponse(url, status, statusText, headers, bytes),
  };
  return light as unknown as Response;
}
