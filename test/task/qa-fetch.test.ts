import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchDataset } from "../../src/task/qa/benchmarks.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// A loopback mirror of test/fixtures/datasets: /<id>/<file> serves the fixture, /tampered/<id>/<file> the same
// bytes with the last one changed, /bigger/... with one more, /missing/... a 404. bfcl-irrelevance's fixture is
// the whole canonical file.
const FIXTURES = join(ROOT, "test", "fixtures", "datasets");
let server: Server;
let base = "";
let requests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    const parts = (req.url ?? "").split("/").filter(Boolean);
    const how = parts[0] === "tampered" || parts[0] === "bigger" ? parts[0] : undefined;
    const rel = how ? parts.slice(1) : parts;
    const file = join(FIXTURES, ...rel);
    if (parts[0] === "missing" || !existsSync(file)) {
      res.writeHead(404);
      res.end("not found");
      return;
    }
    const body = readFileSync(file);
    if (how === "tampered") body.writeUInt8(body.readUInt8(body.length - 1) ^ 1, body.length - 1);
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end(how === "bigger" ? Buffer.concat([body, Buffer.from("\n")]) : body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe("hone datasets fetch (sha256-checked, nothing half-written)", () => {
  it("downloads a pinned benchmark from a mirror and checks its sha256", async () => {
    const dir = tempDir("hone-data-");
    const dest = await fetchDataset("bfcl-irrelevance", { dir, baseUrl: `${base}/bfcl-irrelevance` });
    expect(dest).toBe(join(dir, "bfcl-irrelevance"));
    expect(readFileSync(join(dest, "BFCL_v3_irrelevance.json"))).toEqual(
      readFileSync(join(FIXTURES, "bfcl-irrelevance", "BFCL_v3_irrelevance.json")),
    );
    expect(readdirSync(dir)).toEqual(["bfcl-irrelevance"]);
  });

  it("refuses a file whose sha256 does not match and leaves nothing behind", async () => {
    const dir = tempDir("hone-data-");
    await expect(fetchDataset("bfcl-irrelevance", { dir, baseUrl: `${base}/tampered/bfcl-irrelevance` })).rejects.toThrow(
      /sha256 [0-9a-f]{64} does not match the expected 8237162d.*nothing was saved/,
    );
    await expect(fetchDataset("bfcl-irrelevance", { dir, baseUrl: `${base}/bigger/bfcl-irrelevance` })).rejects.toThrow(
      /more than the expected 160120 bytes/,
    );
    // bfcl-simple's fixture is its first rows only: the first of its two files already fails.
    await expect(fetchDataset("bfcl-simple", { dir, baseUrl: `${base}/bfcl-simple` })).rejects.toThrow(/does not match/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("reports a failed download by its URL and leaves nothing behind", async () => {
    const dir = tempDir("hone-data-");
    await expect(fetchDataset("nq-open", { dir, baseUrl: `${base}/missing` })).rejects.toThrow(
      /cannot download .*NQ-open.dev.jsonl: HTTP 404/,
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses an unpinned benchmark without asking the network, unless told to record what it gets", async () => {
    const dir = tempDir("hone-data-");
    const before = requests;
    await expect(fetchDataset("hotpotqa", { dir, baseUrl: `${base}/hotpotqa` })).rejects.toThrow(
      /hotpotqa: hone has no verified sha256 for hotpot_dev_distractor_v1.json .*--record/,
    );
    expect(requests).toBe(before);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);

    const dest = await fetchDataset("hotpotqa", { dir, baseUrl: `${base}/hotpotqa`, record: true });
    const sums = readFileSync(join(dest, "SHA256SUMS"), "utf8");
    expect(sums).toMatch(/^[0-9a-f]{64} {2}hotpot_dev_distractor_v1.json\n$/);
    // Once recorded, the sha256 is checked like a pinned one: a changed mirror is refused, the copy kept.
    await expect(fetchDataset("hotpotqa", { dir, baseUrl: `${base}/tampered/hotpotqa` })).rejects.toThrow(/does not match/);
    expect(readFileSync(join(dest, "SHA256SUMS"), "utf8")).toBe(sums);
    expect(readdirSync(dir)).toEqual(["hotpotqa"]);
  });
});
