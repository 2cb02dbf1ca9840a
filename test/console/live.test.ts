import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// Live pages: every client of a run is fed by one file watcher on its folder. The safety-net check is set to a
// minute here, so an update within a test can only have come from the watcher.
const root = tempDir("hone-console-live-");
let server: Awaited<ReturnType<typeof startConsole>>;

/** An event-stream client that keeps every event it has read. */
function listen(path: string) {
  const controller = new AbortController();
  let text = "";
  const count = () => (text.match(/event: update/g) ?? []).length;
  const done = (async () => {
    const response = await fetch(`${server.url}${path}`, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    for (;;) text += decoder.decode((await reader.read()).value);
  })().catch(() => {});
  return {
    count,
    text: () => text,
    until: async (n: number) => {
      while (count() < n) await new Promise((r) => setTimeout(r, 10));
    },
    close: async () => {
      controller.abort();
      await done;
    },
  };
}

function addRound(run: string, round: number) {
  const db = new Database(join(root, run, "hone.db"));
  db.prepare(
    "INSERT INTO rounds (run_id, round, status, incumbent_commit, started_at, finished_at) VALUES ('run', ?, 'finished', 'x', 'now', 'now')",
  ).run(round);
  db.close();
}

beforeAll(async () => {
  await writeSyntheticRun(join(root, "gamma"), { rounds: 1, perRound: 2, status: "running" });
  await writeSyntheticRun(join(root, "delta"), { rounds: 1, perRound: 1 });
  server = await startConsole({ root, port: 0, live: { checkMs: 60_000, debounceMs: 10, minGapMs: 10, rescanMs: 50 } });
});

afterAll(() => server.close());

describe("live updates", () => {
  it("feeds every client of a run from one watcher, computing the fingerprint once per change", async () => {
    const clients = Array.from({ length: 5 }, () => listen("/api/runs/gamma/events"));
    try {
      for (const c of clients) await c.until(1);
      expect(server.live.stats()).toMatchObject({ watchers: 1, runs: 1 });
      const before = server.live.stats().fingerprints;
      addRound("gamma", 2);
      for (const c of clients) await c.until(2);
      for (const c of clients) expect(c.text()).toMatch(/"r":3/);
      expect(server.live.stats().fingerprints - before).toBeLessThanOrEqual(2);
    } finally {
      for (const c of clients) await c.close();
    }
    await expect.poll(() => server.live.stats()).toMatchObject({ watchers: 0, runs: 0 });
  });

  it("tells the runs list when a run changes and when a run directory appears", async () => {
    const list = listen("/api/events");
    try {
      await list.until(1);
      expect(list.text()).not.toMatch(/epsilon/);
      addRound("delta", 2);
      await list.until(2);
      await writeSyntheticRun(join(root, "epsilon"), { rounds: 1, perRound: 1 });
      await expect.poll(() => list.text().includes("epsilon")).toBe(true);
      expect(server.live.stats().watchers).toBe(3);
    } finally {
      await list.close();
    }
    await expect.poll(() => server.live.stats().watchers).toBe(0);
  });
});
