import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { triviaqa } from "../../src/task/qa/benchmarks/triviaqa.ts";
import { fetchDataset } from "../../src/task/qa/benchmarks.ts";
import { fetchBenchmark } from "../../src/task/qa/fetch.ts";
import { tempDir } from "../helpers/fixtures.ts";

// TriviaQA, MuSiQue, 2WikiMultihopQA and StrategyQA publish their files inside archives ("<archive>#<member>").
// A loopback server plays the archive's host: /pack.tar.gz is an archive (gzip bytes), /wikipedia-dev.json the
// member as a mirror would serve it.
const MEMBER = JSON.stringify({ Data: [{ QuestionId: "q1", Question: "Who?", Answer: { NormalizedAliases: ["x"] } }] });
let server: Server;
let base = "";
let requests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    const body = req.url === "/pack.tar.gz" ? gzipSync(Buffer.from(MEMBER)) : Buffer.from(MEMBER);
    res.writeHead(200, { "content-type": "application/octet-stream" });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe("hone datasets fetch for a file published inside an archive", () => {
  it("refuses before downloading, naming the archive and the member, instead of saving the archive as the file", async () => {
    const def = { ...triviaqa, files: [{ name: "wikipedia-dev.json", url: `${base}/pack.tar.gz#qa/wikipedia-dev.json` }] };
    const dir = tempDir("hone-data-");
    requests = 0;
    await expect(fetchBenchmark(def, dir, { record: true })).rejects.toThrow(
      /wikipedia-dev\.json is qa\/wikipedia-dev\.json inside http:\/\/127\.0\.0\.1:\d+\/pack\.tar\.gz\. hone does not unpack archives/,
    );
    expect(requests).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("says so for every registered benchmark published that way", async () => {
    for (const id of ["triviaqa", "musique", "2wikimultihopqa", "strategyqa"]) {
      const dir = tempDir("hone-data-");
      await expect(fetchDataset(id, { dir, record: true })).rejects.toThrow(/hone does not unpack archives/);
      expect(readdirSync(dir)).toEqual([]);
    }
  });

  it("fetches the member by name from a mirror (--base-url)", async () => {
    const def = { ...triviaqa, files: [{ name: "wikipedia-dev.json", url: `${base}/pack.tar.gz#qa/wikipedia-dev.json` }] };
    const dir = tempDir("hone-data-");
    const dest = await fetchBenchmark(def, dir, { record: true, baseUrl: base });
    expect(readFileSync(join(dest, "wikipedia-dev.json"), "utf8")).toBe(MEMBER);
    expect((await def.load(dest)).test?.map((t) => t.gold)).toEqual([["x"]]);
  });
});
