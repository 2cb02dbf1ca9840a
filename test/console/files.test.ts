import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_FILE_BYTES, readLines } from "../../src/console/files.ts";
import { RunRegistry } from "../../src/console/runs.ts";
import { consoleApp } from "../../src/console/server.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// Attacks on the console through what lies in a run folder (a program, a model or another user can put files
// there) and through the query string. A request that blocked would hang its test until the test's timeout.
const root = tempDir("hone-console-files-");
const outside = tempDir("hone-console-outside-");
const run = join(root, "run");
const rollout = join(run, "rollouts", "r01-k0");
let registry: RunRegistry;
let app: ReturnType<typeof consoleApp>;
let socketServer: Server;

const mkfifo = (path: string) => execFileSync("mkfifo", [path]);
/** A character device like /dev/zero (endless if read); only root may make one, so elsewhere that case is skipped. */
function mkzero(path: string): boolean {
  try {
    execFileSync("mknod", [path, "c", "1", "5"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
let haveDevice = false;

async function get(path: string) {
  const r = await app.request(path, { headers: { host: "127.0.0.1" } });
  const body = Buffer.from(await r.arrayBuffer());
  let json: { error?: string } = {};
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    // an artifact's text
  }
  return { status: r.status, body, json, headers: r.headers };
}

/** Bytes this process has read through read(2) and friends so far (Linux). */
const bytesRead = () => Number(/rchar: (\d+)/.exec(readFileSync("/proc/self/io", "utf8"))?.[1]);

beforeAll(async () => {
  await writeSyntheticRun(run, { rounds: 2, perRound: 2 });
  mkdirSync(join(rollout, "programs"), { recursive: true });
  writeFileSync(join(rollout, "programs", "0001.py"), "x = 1\n");
  mkfifo(join(rollout, "programs", "0002.py"));
  mkfifo(join(rollout, "trajectory.jsonl"));
  mkfifo(join(run, "pipe.txt"));
  haveDevice = mkzero(join(run, "zero"));
  mkdirSync(join(run, "rollouts", "r01-k1", "programs"), { recursive: true });
  mkfifo(join(run, "rollouts", "r01-k1", "programs", "0001.py"));
  writeFileSync(join(outside, "secret.txt"), "do not serve\n");
  symlinkSync(outside, join(run, "rollouts", "r02-k0"));
  writeFileSync(join(outside, "trajectory.jsonl"), '{"type":"message","content":"secret"}\n');
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(join(run, "sock"), resolve));
  // A run whose WAL file is a FIFO, and a folder whose hone.db is one: SQLite would block opening either.
  await writeSyntheticRun(join(root, "walpipe"), { rounds: 1, perRound: 1 });
  mkfifo(join(root, "walpipe", "hone.db-wal"));
  mkdirSync(join(root, "dbpipe"));
  mkfifo(join(root, "dbpipe", "hone.db"));
  // 1.5 GB that takes no disk: a sparse file.
  writeFileSync(join(run, "huge.log"), "");
  truncateSync(join(run, "huge.log"), 1_500_000_000);
  registry = new RunRegistry(root, 0);
  app = consoleApp(registry, { root });
});

afterAll(() => {
  socketServer.close();
  registry.close();
});

describe("console files", () => {
  it("refuses FIFOs, sockets and folders without opening them, and never blocks", { timeout: 20_000 }, async () => {
    const refused = [
      ["/api/runs/run/artifact?path=pipe.txt", /pipe\.txt is a FIFO; only regular files are served/],
      ["/api/runs/run/artifact?path=sock", /sock is a socket/],
      ["/api/runs/run/artifact?path=rollouts", /rollouts is a folder/],
      ["/api/runs/run/artifact?path=rollouts%2Fr01-k0%2Fprograms", /is a folder/],
      ["/api/runs/run/rollouts/r01-k0/trajectory", /trajectory\.jsonl is a FIFO/],
      ["/api/runs/run/rollouts/r01-k0/program-diff?from=1&to=2", /0002\.py is a FIFO/],
      ["/api/runs/run/rollouts/r01-k1/program-diff?from=1&to=1", /0001\.py is a FIFO/],
    ] as const;
    // More at once than libuv has threads: a blocking open would starve every later file operation.
    const answers = await Promise.all([...refused, ...refused].map(([path]) => get(path)));
    for (const [i, a] of answers.entries()) {
      const [path, message] = refused[i % refused.length] as (typeof refused)[number];
      expect(a.status, path).toBe(400);
      expect(a.json.error, path).toMatch(message);
    }
    expect((await get("/api/runs/run/rollouts/r01-k0/program-diff?from=1&to=1")).json).toMatchObject({ from: 1, to: 1 });
    expect((await readFile(join(run, "rollouts", "r01-k0", "programs", "0001.py"), "utf8")).length).toBe(6);
  });

  it("refuses a device without opening it (root only: mknod)", async (ctx) => {
    if (!haveDevice) ctx.skip();
    const r = await get("/api/runs/run/artifact?path=zero");
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/zero is a device; only regular files are served/);
  });

  it("never opens a run whose hone.db or WAL is a FIFO, and the other runs stay served", { timeout: 20_000 }, async () => {
    const list = await get("/api/runs");
    const ids = (list.json as unknown as { items: { id: string; status: string }[] }).items.map((r) => r.id);
    expect(ids).toEqual(["run", "walpipe"]); // dbpipe is no run directory at all
    expect((await get("/api/runs/walpipe")).status).toBe(404);
    expect((await get("/api/runs/walpipe/receipt")).status).toBe(404);
    expect((await get("/api/runs/run")).status).toBe(200);
  });

  it("refuses what leads out of the run folder, through a link to a folder too", async () => {
    expect((await get("/api/runs/run/artifact?path=rollouts%2Fr02-k0%2Fsecret.txt")).status).toBe(404);
    const t = await get("/api/runs/run/rollouts/r02-k0/trajectory");
    expect(t.status).toBe(404);
    expect(t.body.toString()).not.toMatch(/secret/);
  });

  it("serves a 1.5 GB file's first 2 MiB, reading no more than that", async () => {
    // The measure itself: reading 4 MiB shows as at least 4 MiB read.
    const probe = join(tempDir(), "probe");
    writeFileSync(probe, Buffer.alloc(4 * 1024 * 1024, 1));
    const before = bytesRead();
    await readFile(probe);
    expect(bytesRead() - before).toBeGreaterThanOrEqual(4 * 1024 * 1024);

    const rss = process.memoryUsage().rss;
    const start = bytesRead();
    const r = await get("/api/runs/run/artifact?path=huge.log");
    const read = bytesRead() - start;
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(MAX_FILE_BYTES);
    expect(r.headers.get("x-hone-size")).toBe("1500000000");
    expect(r.headers.get("x-hone-truncated")).toMatch(/first 2097152 bytes of 1500000000/);
    expect(read).toBeLessThan(MAX_FILE_BYTES + 512 * 1024);
    expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 1024 * 1024);
  });

  it("answers 400 naming the parameter for offsets and limits that are not small whole numbers", async () => {
    const routes = [
      "/api/runs",
      "/api/runs/run/rollouts",
      "/api/runs/run/candidates",
      "/api/runs/run/lineage",
      "/api/runs/run/rollouts/r01-k0/trajectory",
    ];
    const bad = ["1e308", "-1", "2.5", "abc", "0x10", "", " 1", "99999999999999999999", "NaN", "Infinity", "1e3"];
    for (const route of routes)
      for (const [name, value] of [
        ...bad.map((v) => ["offset", v]),
        ...bad.map((v) => ["limit", v]),
        ["limit", "0"],
        ["limit", "100001"],
      ]) {
        const r = await get(`${route}?${name}=${encodeURIComponent(value as string)}`);
        expect(r.status, `${route} ${name}=${value}`).toBe(400);
        expect(r.json.error, `${route} ${name}=${value}`).toMatch(new RegExp(`^${name} must be a whole number`));
      }
    for (const q of ["from=1e308&to=1", "from=1&to=-2", "from=0&to=1", "to=1"]) {
      const r = await get(`/api/runs/run/rollouts/r01-k0/program-diff?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.error, q).toMatch(/^(from|to) (must be|is required)/);
    }
    expect((await get("/api/runs/run/rollouts?offset=1000000000&limit=1000")).status).toBe(200);
  });
});

describe("trajectory pages", () => {
  it("counts every line, keeps a page, and caps a line too long to show", async () => {
    const path = join(tempDir(), "t.jsonl");
    const long = JSON.stringify({ type: "tool_result", output: "y".repeat(3_000_000) });
    const lines = [...Array.from({ length: 9 }, (_, i) => JSON.stringify({ i })), long, JSON.stringify({ i: 10 }), ""];
    writeFileSync(path, lines.join("\n"));
    const page = await readLines(path, "t.jsonl", { offset: 8, limit: 3 });
    expect(page.total).toBe(11);
    expect(page.lines[0]).toBe('{"i":8}');
    expect(page.lines[1]?.length).toBe(500);
    expect(page.cut.get(1)).toBe(long.length);
    expect(page.lines[2]).toBe('{"i":10}');
    const capped = await readLines(path, "t.jsonl", { offset: 0, limit: 100, maxBytes: 20 });
    expect(capped.total).toBe(11);
    expect(capped.lines).toEqual(['{"i":0}', '{"i":1}', '{"i":2}']);
  });
});
