import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { serveStatic } from "@hono/node-server/serve-static";
import { Hono } from "hono";
import { secureHeaders } from "hono/secure-headers";
import { HoneError } from "../errors.ts";
import { consoleApi } from "./api.ts";
import { gridRoutes } from "./api-grid.ts";
import { guard, isLoopback } from "./auth.ts";
import { LiveHub, type LiveOptions } from "./live.ts";
import { RunRegistry } from "./runs.ts";

/** Where `npm run build:console` (run by `npm ci` through `prepare`) writes the pages. */
export const CONSOLE_DIST = join(dirname(fileURLToPath(import.meta.url)), "dist");

export interface ConsoleOptions {
  root: string;
  host?: string;
  port?: number;
  token?: string;
  distDir?: string;
  /** How live pages follow runs (intervals for tests). */
  live?: LiveOptions;
}

export function consoleApp(runs: RunRegistry, opts: ConsoleOptions, live = new LiveHub(runs, opts.live)): Hono {
  const dist = opts.distDir ?? CONSOLE_DIST;
  const app = new Hono();
  app.use("*", guard(opts.token));
  app.use(
    "*",
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", "data:"],
        frameAncestors: ["'none'"],
      },
    }),
  );
  app.route("/api", consoleApi(runs, live));
  app.route("/api", gridRoutes(runs, live));
  app.all("/api/*", (c) => c.json({ error: "no such API route" }, 404));
  // What a run's records make throw (a damaged page of its hone.db) answers that request with what went wrong, as
  // JSON the pages can show, never a bare "Internal Server Error".
  app.onError((err, c) =>
    c.json({ error: `hone view could not answer ${c.req.path}: ${err.message.split("\n")[0]?.slice(0, 300)}` }, 500),
  );
  app.use("/assets/*", serveStatic({ root: dist }));
  // Every other path is a page of the single-page app.
  app.get("*", (c) => {
    try {
      return c.html(readFileSync(join(dist, "index.html"), "utf8"));
    } catch {
      return c.text("hone view: the console pages are not built; run `npm run build:console` in hone's folder\n", 500);
    }
  });
  return app;
}

/** Starts the console; resolves once it listens. Any bind other than loopback needs a token. */
export async function startConsole(
  opts: ConsoleOptions,
): Promise<{ url: string; close: () => Promise<void>; live: Pick<LiveHub, "stats"> }> {
  const host = opts.host ?? "127.0.0.1";
  if (!isLoopback(host) && !opts.token)
    throw new HoneError(
      "usage",
      `binding to ${host} shares your runs on the network; pass --token-file <file> (a secret of 16+ characters)`,
    );
  if (opts.token !== undefined && opts.token.length < 16)
    throw new HoneError("usage", "the console token must be at least 16 characters; put a long random secret in the token file");
  const runs = new RunRegistry(resolve(opts.root), opts.live?.rescanMs);
  const live = new LiveHub(runs, opts.live);
  const app = consoleApp(runs, opts, live);
  return await new Promise((resolvePromise, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port: opts.port ?? 4460 }, (info: AddressInfo) => {
      const shown = info.family === "IPv6" ? `[${info.address}]` : info.address;
      resolvePromise({
        url: `http://${shown}:${info.port}`,
        live,
        close: () =>
          new Promise((done) => {
            live.close();
            runs.close();
            server.close(() => done());
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new HoneError("usage", `port ${opts.port ?? 4460} on ${host} is in use; pass --port <n> (0 picks a free one)`)
          : err,
      ),
    );
  });
}
