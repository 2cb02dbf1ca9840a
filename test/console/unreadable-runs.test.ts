import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { startHone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// A folder of runs holds what people put there: a hone.db half copied, damaged, or another program's database. Each
// is one unreadable run in the list; the others stay served, and no live page's check takes the console down.
const root = tempDir("hone-console-unreadable-");
let server: Awaited<ReturnType<typeof startConsole>>;

/** Reads an event stream for `ms`, then stops; what it read. */
async function readEvents(address: string, ms: number): Promise<string> {
  const controller = new AbortController();
  let text = "";
  const done = (async () => {
    const response = await fetch(address, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break; // the server ended the stream (or went away)
      text += decoder.decode(value);
    }
  })().catch(() => {});
  await new Promise((r) => setTimeout(r, ms));
  controller.abort();
  await done;
  return text;
}

beforeAll(async () => {
  await writeSyntheticRun(join(root, "good"), { rounds: 1, perRound: 2 });
  mkdirSync(join(root, "garbage"));
  writeFileSync(join(root, "garbage", "hone.db"), Buffer.alloc(8192, 0x5a)); // not SQLite at all
  mkdirSync(join(root, "empty"));
  writeFileSync(join(root, "empty", "hone.db"), ""); // a copy that has not started yet
  mkdirSync(join(root, "foreign"));
  const other = new Database(join(root, "foreign", "hone.db")); // SQLite, but not hone's
  other.exec("CREATE TABLE notes (text TEXT)");
  other.close();
  server = await startConsole({ root, port: 0, live: { checkMs: 20, debounceMs: 5, minGapMs: 5, rescanMs: 20 } });
});

afterAll(() => server?.close());

describe("a folder of runs with hone.db files SQLite cannot read as hone's", () => {
  it("lists each as unreadable and serves the others", async () => {
    const r = await fetch(`${server.url}/api/runs`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { items: { id: string; status: string }[] };
    expect(body.items.map((i) => [i.id, i.status])).toEqual([
      ["empty", "unreadable"],
      ["foreign", "unreadable"],
      ["garbage", "unreadable"],
      ["good", "finished"],
    ]);
    for (const id of ["garbage", "empty", "foreign"]) {
      for (const route of ["", "/receipt", "/candidates", "/rollouts"]) {
        const answer = await fetch(`${server.url}/api/runs/${id}${route}`);
        expect([id, route, answer.status]).toEqual([id, route, 404]);
        expect(((await answer.json()) as { error: string }).error).toMatch(/no run named/);
      }
    }
  });

  it("keeps serving (hone view, its own process) while live pages follow the list and an unreadable run", {
    timeout: 60_000,
  }, async () => {
    const view = await startHone(["view", root, "--port", "0", "--json"]);
    try {
      const { url } = JSON.parse(view.firstLine) as { url: string };
      // Past the live pages' 2 s safety-net check, which runs on a timer.
      const [list, run] = await Promise.all([
        readEvents(`${url}/api/events`, 3000),
        readEvents(`${url}/api/runs/garbage/events`, 3000),
      ]);
      expect(list).toContain('["garbage","gone"]');
      expect(run).toMatch(/data: gone/);
      const after = await fetch(`${url}/api/runs/good`, { signal: AbortSignal.timeout(5000) });
      expect(after.status).toBe(200);
      expect(view.output()).not.toMatch(/SqliteError/);
    } finally {
      await view.stop();
    }
  });
});

describe("a trajectory with a line nested too deeply to send back", () => {
  it("serves that line as unreadable and every other event as it is", async () => {
    const folder = join(root, "good", "rollouts", "r09-deep");
    mkdirSync(folder, { recursive: true });
    const depth = 100_000; // 200 KB: under the 1 MiB line cap, and JSON.parse takes it
    const deep = `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const bracketsInStrings = JSON.stringify({ type: "message", role: "user", content: "[".repeat(5000) });
    const lines = [
      JSON.stringify({ type: "message", role: "system", content: "first" }),
      deep,
      bracketsInStrings,
      JSON.stringify({ type: "message", role: "user", content: "last" }),
    ];
    writeFileSync(join(folder, "trajectory.jsonl"), `${lines.join("\n")}\n`);
    const r = await fetch(`${server.url}/api/runs/good/rollouts/r09-deep/trajectory`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { total: number; events: { type: string; content?: string; why?: string }[] };
    expect(body.total).toBe(4);
    expect(body.events.map((e) => e.type)).toEqual(["message", "unreadable", "message", "message"]);
    expect(body.events[1]?.why).toMatch(/nested deeper than/);
    expect(body.events[2]?.content).toHaveLength(5000);
    expect(body.events[3]?.content).toBe("last");
  });
});
