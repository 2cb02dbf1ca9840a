import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crossSite } from "../../src/console/auth.ts";
import { startConsole } from "../../src/console/server.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// Another site's page in the user's browser can send requests to a console on 127.0.0.1 (a script's fetch, an
// EventSource, an image): it cannot read the answers, but the console must not compute them either, and a request
// whose Origin names another host is no request of this console's. Its own pages, and a link from elsewhere to one of
// its pages, keep working.
const root = tempDir("hone-console-probe6-cross-");
let server: Awaited<ReturnType<typeof startConsole>>;
let host: string;

beforeAll(async () => {
  await writeSyntheticRun(join(root, "cp"), { rounds: 1, perRound: 2 });
  server = await startConsole({ root, port: 0 });
  host = new URL(server.url).host;
}, 60_000);

afterAll(() => server?.close());

const status = async (path: string, headers: Record<string, string>) => {
  const r = await fetch(`${server.url}${path}`, { headers });
  await r.body?.cancel();
  return r.status;
};

describe("requests from another site", () => {
  it("are refused by the API, whatever they ask for", async () => {
    for (const path of [
      "/api/runs",
      "/api/runs/cp",
      "/api/runs/cp/events",
      "/api/events",
      "/api/runs/cp/artifact?path=hone.db",
    ]) {
      expect(await status(path, { "sec-fetch-site": "cross-site" }), path).toBe(403);
      expect(await status(path, { "sec-fetch-site": "same-site" }), path).toBe(403);
      expect(await status(path, { origin: "http://evil.example" }), path).toBe(403);
      expect(await status(path, { origin: "null" }), path).toBe(403);
      expect(await status(path, { origin: "http://127.0.0.1:1" }), path).toBe(403);
    }
  });

  it("still answer the console's own pages, non-browser clients, and a link from elsewhere to a page", async () => {
    expect(await status("/api/runs", { "sec-fetch-site": "same-origin" })).toBe(200);
    expect(await status("/api/runs", { "sec-fetch-site": "none" })).toBe(200);
    expect(await status("/api/runs", {})).toBe(200);
    expect(await status("/api/runs", { origin: `http://${host}` })).toBe(200);
    // A page's address opened from a link on another site: the page loads (its API calls are its own).
    expect(await status("/run/cp", { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" })).toBe(200);
  });

  it("are told apart from the browser's word before the Origin (a proxy in front may rewrite Host)", () => {
    expect(crossSite({ origin: "https://console.example", host: "127.0.0.1:4460", site: "same-origin" }, "/api/runs")).toBeNull();
    expect(crossSite({ origin: "https://evil.example", host: "127.0.0.1:4460", site: "cross-site" }, "/")).toMatch(
      /evil\.example/,
    );
    expect(crossSite({ host: "127.0.0.1:4460", site: "cross-site" }, "/assets/index.js")).toBeNull();
  });
});

describe("an experiment.json from someone else", () => {
  it("follows only the experiment's own cell × seed folders, never one beside it", async () => {
    const exp = join(root, "exp");
    mkdirSync(join(exp, "cell", "seed-0"), { recursive: true });
    mkdirSync(join(root, "seed-1"), { recursive: true });
    writeFileSync(join(root, "seed-1", "cell.json"), "{}");
    const planned = ["../seed-1", "./seed-2", "cell/seed-0", "..\\x/seed-3"];
    writeFileSync(
      join(exp, "experiment.json"),
      JSON.stringify({
        format: "hone-experiment/1",
        name: "e",
        baseline: "m",
        budget: { unit: "evaluations", size: 1 },
        planned,
      }),
    );
    const r = await fetch(`${server.url}/api/experiment?id=exp`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { seeds: { dir: string; state: string }[] };
    expect(body.seeds).toEqual([{ dir: "cell/seed-0", run: "exp/cell/seed-0", state: "waiting" }]);
  });
});
