import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";

/**
 * The token's cookie is named after a digest of the token: a browser keeps cookies per host, not per port, so two
 * consoles on one machine (ports 8080 and 8081) under one name would each overwrite the other's, and opening one would
 * sign the user out of the other.
 */
const cookieName = (token: string) => `hone_token_${createHash("sha256").update(token).digest("hex").slice(0, 12)}`;

/** Whether two secrets are equal, in time that tells nothing of either, their lengths included (digests are compared). */
function same(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Where to send a page opened as `/?token=…`: the same page without the token in its address. The path is taken as it
 * came, still percent-encoded (Hono's decoded `c.req.path` turns `/%09/evil.example` into `/\t/evil.example`, which a
 * browser reads as `//evil.example`, another site), with any whitespace or control character left out and the leading
 * slashes and backslashes made one, so the Location is always a path on this console, never `//host/…`.
 */
export function sameSitePath(url: string): string {
  const raw = new URL(url).pathname;
  const printable = raw.replace(/[\u0000-\u0020\u007f]/g, "");
  return `/${printable.replace(/^[/\\]+/, "")}`;
}

export const isLoopback = (host: string) => host === "127.0.0.1" || host === "::1" || host === "localhost";

/**
 * Why a request made by another site's page is refused, or null. The console's own pages ask its API from the same
 * origin, so a browser marks their requests `Sec-Fetch-Site: same-origin` (or `none`: an address typed in) and sends
 * no `Origin` with a GET. Another site's page (a link, a script's fetch, an EventSource, an image) is refused before
 * any run is read: it could not read the answer, but it would still make the console compute it, and a cross-site
 * request carrying an `Origin` that names another host is no request of this console's. Opening a page of the
 * console from a link elsewhere stays possible: only the API is kept to the console's own pages.
 */
export function crossSite(headers: { origin?: string; host?: string; site?: string }, path: string): string | null {
  const site = headers.site?.toLowerCase();
  // The browser's own word (a proxy in front may rewrite Host, never this).
  if (site === "same-origin" || site === "none") return null;
  if (headers.origin !== undefined) {
    let host: string | null = null;
    try {
      host = new URL(headers.origin).host;
    } catch {
      host = null; // "null" (a sandboxed frame, a file), or anything not a URL
    }
    if (host === null || host !== (headers.host ?? "").toLowerCase())
      return `hone view answers only its own pages; this request came from ${JSON.stringify(headers.origin.slice(0, 100))}\n`;
  }
  if (path.startsWith("/api/") && site !== undefined)
    return "hone view's API answers only the console's own pages, not another site's\n";
  return null;
}

/**
 * Without a token (loopback binds only) requests must name a loopback Host, which stops DNS-rebinding pages from
 * reading runs through the user's browser. With a token every request must carry it: `Authorization: Bearer`, the
 * cookie set when a page is opened as `/?token=…`, or (for EventSource, which sends no headers) the cookie alone.
 */
export function guard(token: string | undefined): MiddlewareHandler {
  const cookieKey = token ? cookieName(token) : "";
  return async (c, next) => {
    const foreign = crossSite(
      { origin: c.req.header("origin"), host: c.req.header("host"), site: c.req.header("sec-fetch-site") },
      c.req.path,
    );
    if (foreign) return c.text(foreign, 403);
    if (!token) {
      const host = (c.req.header("host") ?? "").replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
      if (!isLoopback(host)) return c.text("hone view: this console only answers to 127.0.0.1 or localhost\n", 403);
      return next();
    }
    const fromQuery = c.req.query("token");
    if (fromQuery !== undefined && same(fromQuery, token) && c.req.method === "GET" && !c.req.path.startsWith("/api/")) {
      setCookie(c, cookieKey, token, { httpOnly: true, sameSite: "Strict", path: "/" });
      return c.redirect(sameSitePath(c.req.url), 302);
    }
    const bearer = c.req.header("authorization")?.replace(/^Bearer\s+/i, "");
    const cookie = getCookie(c, cookieKey);
    if ((bearer && same(bearer, token)) || (cookie && same(cookie, token))) return next();
    return c.json(
      {
        error:
          "this console needs its token: open the page as /?token=<contents of the token file>, or send Authorization: Bearer",
      },
      401,
    );
  };
}
