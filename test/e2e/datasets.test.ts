import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateBenchmark } from "../../src/loop/eval.ts";
import { BENCHMARKS, splitsOf } from "../../src/task/qa/benchmarks.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const FIXTURES = join(ROOT, "test", "fixtures", "datasets");
let server: Server;
let url = "";

beforeAll(async () => {
  // A loopback mirror of bfcl-irrelevance's fixture (the whole canonical file); /tampered/ changes its last byte.
  server = createServer((req, res) => {
    const name = (req.url ?? "").split("/").pop() ?? "";
    try {
      const body = readFileSync(join(FIXTURES, "bfcl-irrelevance", name));
      if ((req.url ?? "").startsWith("/tampered/")) body.writeUInt8(body.readUInt8(body.length - 1) ^ 1, body.length - 1);
      res.writeHead(200);
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe("hone datasets (CLI)", () => {
  it("lists every benchmark with its splits, size, metrics, licence and whether it is fetched", async () => {
    const r = await hone(["datasets", "--json", "--data-dir", FIXTURES]);
    expect(r.code, r.stderr).toBe(0);
    const list = JSON.parse(r.stdout) as { id: string; metrics: string[]; licence: string; fetched: boolean; splits: string[] }[];
    expect(list.length).toBeGreaterThanOrEqual(12);
    for (const b of list) {
      expect(b.metrics.length, b.id).toBeGreaterThan(0);
      expect(b.licence, b.id).not.toBe("");
      expect(b.fetched, b.id).toBe(true);
    }
    const empty = await hone(["datasets", "--data-dir", tempDir()]);
    expect(empty.stdout).toMatch(
      /gsm8k +train\/validation\/test +train 7473, test 1319 +strict-match, flexible-extract +MIT +no/,
    );
  });

  it("fetches from a mirror with the sha256 checked, and refuses a changed file leaving nothing behind", async () => {
    const dir = tempDir("hone-data-");
    const ok = await hone(["datasets", "fetch", "bfcl-irrelevance", "--base-url", url, "--data-dir", dir]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readdirSync(join(dir, "bfcl-irrelevance"))).toEqual(["BFCL_v3_irrelevance.json"]);
    const other = tempDir("hone-data-");
    const bad = await hone(["datasets", "fetch", "bfcl-irrelevance", "--base-url", `${url}/tampered`, "--data-dir", other]);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/does not match the expected 8237162d/);
    expect(readdirSync(other)).toEqual([]);
    const unpinned = await hone(["datasets", "fetch", "hotpotqa", "--data-dir", other]);
    expect(unpinned.code).toBe(2);
    expect(unpinned.stderr).toMatch(/no verified sha256 .*--record/);
    // A file published inside an archive: hone does not unpack archives, so --record is not offered.
    const archived = await hone(["datasets", "fetch", "musique", "--data-dir", other]);
    expect(archived.code).toBe(2);
    expect(archived.stderr).toMatch(/inside https:\/\/drive\.google\.com\/.*hone does not unpack archives/);
    expect(readdirSync(other)).toEqual([]);
  });
});

// Every benchmark's fixture through hone eval's code (in this process, to keep the suite short): the oracle
// scores 100% on every metric, the wrong oracle 0%. One of them also through the CLI, as a user runs it.
describe.each(Object.keys(BENCHMARKS))("eval on the %s fixture", (id) => {
  const split = splitsOf(BENCHMARKS[id]!).includes("test") ? "test" : "train";
  const evalWith = (harness: string) =>
    evaluateBenchmark({
      harnessDir: join(ROOT, "harnesses", harness),
      benchmark: id,
      split,
      limit: 12,
      dataDir: FIXTURES,
      model: "offline",
      outDir: join(tempDir(), "run"),
    });
  it("the oracle scores 100% and the wrong oracle 0% on every official metric", async () => {
    const r = await evalWith("oracle");
    const w = await evalWith("wrong-oracle");
    expect(r.completed).toBeGreaterThan(0);
    expect(r.failed).toBe(0);
    expect(w.failed).toBe(0);
    expect(r.accuracy).toBe(1);
    expect(Object.keys(r.metrics)).toEqual([...BENCHMARKS[id]!.scorer.metrics]);
    for (const v of Object.values(r.metrics)) expect(v).toBe(1);
    expect(w.accuracy).toBe(0);
    for (const v of Object.values(w.metrics)) expect(v).toBe(0);
  });
});

describe("hone eval with the wrong oracle (CLI)", () => {
  it("scores 0 on BFCL's parallel calls and says so by the metric's name", async () => {
    const r = await hone([
      "eval",
      "--harness",
      "harnesses/wrong-oracle",
      "--benchmark",
      "bfcl-parallel",
      "--data-dir",
      FIXTURES,
      "--model",
      "offline",
      "--out",
      join(tempDir(), "eval"),
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /wrong-oracle on bfcl-parallel\/test: accuracy 0\.0% \(95% CI of accuracy 0\.0%–\d+\.\d%\) over 10 completed of 10/,
    );
  });
});
