import { createServer, request as httpRequest } from "node:http";
import { rng } from "../../src/model/offline/rng.ts";
import { listenLoopback } from "./loopback.ts";

export type Fault = "429" | "500" | "timeout" | "reset" | "malformed_args" | "empty_choices";
const FAULTS: Fault[] = ["429", "500", "timeout", "reset", "malformed_args", "empty_choices"];

/**
 * A fault-injecting OpenAI-compatible endpoint in front of a real one (the offline model): each chat completion
 * fails with probability `rate` in one of six ways, chosen by a seeded generator, else passes through unchanged.
 */
export async function startFaultProxy(upstream: string, opts: { rate: number; seed: number; timeoutDelayMs: number }) {
  const random = rng(opts.seed);
  const injected: Record<Fault, number> = { "429": 0, "500": 0, timeout: 0, reset: 0, malformed_args: 0, empty_choices: 0 };
  let passed = 0;
  const target = new URL(upstream);
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const forward = () =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const up = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: { "content-type": "application/json", "content-length": body.length },
          },
          (r) => {
            const out: Buffer[] = [];
            r.on("data", (c) => out.push(c));
            r.on("end", () => resolve({ status: r.statusCode ?? 500, text: Buffer.concat(out).toString() }));
          },
        );
        up.on("error", reject);
        up.end(body);
      });
    const isChat = req.url?.endsWith("/chat/completions");
    const fault = isChat && random() < opts.rate ? FAULTS[Math.floor(random() * FAULTS.length)] : undefined;
    if (fault) injected[fault]++;
    else passed++;
    const json = (status: number, v: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(v));
    };
    switch (fault) {
      case "429":
        return json(429, { error: { message: "rate limited", type: "rate_limit", code: 429 } }, { "retry-after": "0" });
      case "500":
        return json(500, { error: { message: "internal error", type: "server_error", code: 500 } });
      case "timeout":
        await new Promise((r) => setTimeout(r, opts.timeoutDelayMs));
        if (!res.destroyed) json(504, { error: { message: "too late" } });
        return;
      case "reset": {
        const real = await forward();
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(real.text) });
        res.write(real.text.slice(0, Math.floor(real.text.length / 2)));
        setTimeout(() => res.socket?.destroy(), 5);
        return;
      }
      case "empty_choices": {
        const real = JSON.parse((await forward()).text);
        return json(200, { ...real, choices: [] });
      }
      case "malformed_args": {
        const real = JSON.parse((await forward()).text);
        const call = real.choices?.[0]?.message?.tool_calls?.[0];
        if (call) call.function.arguments = `${call.function.arguments.slice(0, -1)},}`;
        return json(200, real);
      }
      default: {
        const real = await forward();
        res.writeHead(real.status, { "content-type": "application/json" });
        res.end(real.text);
      }
    }
  });
  return { ...(await listenLoopback(server)), injected, passed: () => passed };
}
