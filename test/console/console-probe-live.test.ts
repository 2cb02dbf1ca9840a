import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// A run folder deleted while a page watches it, then made again under the same name: the page must hear of the
// new run (a fresh database's data_version can equal the old one's, so the version alone says nothing).
const root = tempDir("hone-console-probe-live-");
const spare = tempDir("hone-console-probe-spare-");
let server: Awaited<ReturnType<typeof startConsole>>;

function listen(path: string) {
  const controller = new AbortController();
  let text = "";
  const done = (async () => {
    const response = await fetch(`${server.url}${path}`, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    for (;;) text += decoder.decode((await reader.read()).value);
  })().catch(() => {});
  const events = () => [...text.matchAll(/event: update\ndata: (.*)\n/g)].map((m) => m[1]);
  return {
    events,
    close: async () => {
      controller.abort();
      await done;
    },
  };
}

beforeAll(async () => {
  await writeSyntheticRun(join(root, "phoenix"), { rounds: 1, perRound: 2 });
  await writeSyntheticRun(join(spare, "phoenix"), { rounds: 3, perRound: 1 });
  server = await startConsole({ root, port: 0, live: { checkMs: 100, debounceMs: 10, minGapMs: 10, rescanMs: 50 } });
});

afterAll(() => server.close());

describe("a watched run folder deleted and made again", () => {
  it("sends the new run's fingerprint after 'gone'", async () => {
    const client = listen("/api/runs/phoenix/events");
    try {
      await expect.poll(() => client.events().length).toBe(1);
      const first = client.events()[0];
      rmSync(join(root, "phoenix"), { recursive: true, force: true });
      await expect.poll(() => client.events().at(-1)).toBe("gone");
      cpSync(join(spare, "phoenix"), join(root, "phoenix"), { recursive: true });
      await expect.poll(() => client.events().at(-1), { timeout: 4000 }).not.toBe("gone");
      const back = client.events().at(-1);
      expect(back).not.toBe(first);
      expect(back).toMatch(/"r":4/);
    } finally {
      await client.close();
    }
  });
});
