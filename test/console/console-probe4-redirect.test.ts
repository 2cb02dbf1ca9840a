import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { guard } from "../../src/console/auth.ts";

/**
 * A page opened as `/?token=…` is sent on to the same page without the token. The Location must stay a path on this
 * console however the address is encoded: a browser strips tabs and newlines from a Location and reads `\` as `/`, so
 * `/\t/evil.example` or `/\\evil.example` would be another site (an open redirect).
 */
const token = "a-long-random-secret-for-the-redirect-probe";
const app = new Hono();
app.use("*", guard(token));
app.get("*", (c) => c.text("page"));

async function locationFor(path: string): Promise<string> {
  const r = await app.request(`http://127.0.0.1:8080${path}${path.includes("?") ? "&" : "?"}token=${token}`);
  expect(r.status).toBe(302);
  return r.headers.get("location") ?? "";
}

/** Where a browser on this console would go for a Location, as WHATWG URL parsing resolves it. */
const resolvedHost = (location: string) => new URL(location, "http://127.0.0.1:8080/").host;

describe("the token's redirect never leaves this console", () => {
  it.each([
    ["/%09/evil.example/x", "/%09/evil.example/x"],
    ["/%0a/evil.example/x", "/%0a/evil.example/x"],
    ["/%0d%0a/evil.example/x", "/%0d%0a/evil.example/x"],
    ["/%5c/evil.example/x", "/%5c/evil.example/x"],
    ["/%5C%5Cevil.example/x", "/%5C%5Cevil.example/x"],
    ["/%2F%2Fevil.example/x", "/%2F%2Fevil.example/x"],
    ["/%2f/evil.example/x", "/%2f/evil.example/x"],
    ["//evil.example/x", "/evil.example/x"],
    ["/\\evil.example/x", "/evil.example/x"],
    ["/%20/evil.example/x", "/%20/evil.example/x"],
    ["/run/good", "/run/good"],
    ["/run/a%20b", "/run/a%20b"],
  ])("%s goes to %s, on this host", async (path, to) => {
    const location = await locationFor(path);
    expect(location).toBe(to);
    expect(location).not.toMatch(/[\u0000-\u0020\u007f\\]/);
    expect(resolvedHost(location)).toBe("127.0.0.1:8080");
    expect(location).not.toContain(token);
  });

  it("the rest of the query goes with the token", async () => {
    expect(await locationFor("/run/good?x=1")).toBe("/run/good");
  });
});
