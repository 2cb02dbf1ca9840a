import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 256 });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 256 });

/**
 * A `fetch` for the openai SDK over node:http(s) with keep-alive sockets. Node 20's built-in fetch (undici) costs
 * about 0.6 ms more per loopback call, which dominates an agent step against a local server (see bench/).
 * Supports what the SDK uses: method, headers, a string or byte body, and an AbortSignal.
 */
export const nodeFetch: typeof fetch = (input, init) =>
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
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        // A connection reset mid-body ends the response without "end"; that is a dropped connection, retried.
        res.on("close", () => {
          if (!res.complete) reject(Object.assign(new Error("the connection was reset mid-response"), { code: "ECONNRESET" }));
        });
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (Array.isArray(v)) for (const x of v) h.append(k, x);
            else if (v !== undefined) h.set(k, v);
          }
          const status = res.statusCode ?? 500;
          const bytes = Buffer.concat(chunks);
          if (status >= 200 && status < 300 && status !== 204) {
            resolve(lightResponse(url.href, status, res.statusMessage ?? "", h, bytes));
            return;
          }
          const nullBody = status === 204 || status === 304;
          resolve(new Response(nullBody ? null : bytes, { status, statusText: res.statusMessage, headers: h }));
        });
      },
    );
    const onAbort = () => req.destroy(Object.assign(new Error("The operation was aborted."), { name: "AbortError" }));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("close", () => signal?.removeEventListener("abort", onAbort));
    req.on("error", reject);
    req.end(payload);
  });

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
