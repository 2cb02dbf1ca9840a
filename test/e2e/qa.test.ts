import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";

// GSM8K's fixture (40 test and 120 train rows of the real files, MIT) is a data folder as `hone datasets fetch`
// leaves one; served on loopback it is also a mirror whose files do not match the canonical sha256.
const FIXTURE = join(ROOT, "test", "fixtures", "datasets", "gsm8k");
const data = join(ROOT, "test", "fixtures", "datasets");
let server: Server;
let url = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    const name = (req.url ?? "").split("/").pop() ?? "";
    try {
      const body = readFileSync(join(FIXTURE, name));
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end("not found");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

describe("datasets, eval and train on GSM8K (CLI, offline model)", () => {
  it("fetch checks the sha256 and refuses a file that does not match, leaving nothing behind", async () => {
    const other = tempDir("hone-data-");
    const r = await hone(["datasets", "fetch", "gsm8k", "--base-url", url, "--data-dir", other]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/sha256 [0-9a-f]{64} does not match the expected 17f347dc/);
    expect(readdirSync(other)).toEqual([]);
  });

  it("the oracle harness scores 100%, so the scorer and plumbing are right", async () => {
    const r = await hone([
      "eval",
      "--harness",
      "harnesses/oracle",
      "--benchmark",
      "gsm8k",
      "--split",
      "test",
      "--model",
      "offline",
      "--data-dir",
      data,
      "--json",
    ]);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.accuracy).toBe(1);
    expect(s.metric).toBe("strict-match");
    expect(s.metrics).toEqual({ "strict-match": 1, "flexible-extract": 1 });
    expect(s.completed).toBe(40);
  });

  it("evaluates the QA harness with a summary and confidence interval, and no gold answer ever reaches the model", async () => {
    const out = join(tempDir(), "eval");
    const r = await hone([
      "eval",
      "--harness",
      "harnesses/qa",
      "--benchmark",
      "gsm8k",
      "--split",
      "test",
      "--limit",
      "20",
      "--model",
      "offline",
      "--data-dir",
      data,
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /qa-solver on gsm8k\/test: strict-match \d+\.\d%, flexible-extract \d+\.\d% \(95% CI of strict-match \d+\.\d%–\d+\.\d%\) over 20 completed of 20/,
    );
    const gold = readFileSync(join(data, "gsm8k", "test.jsonl"), "utf8")
      .trim()
      .split("\n")
      .slice(0, 20)
      .map((l) => JSON.parse(l).answer as string);
    for (const f of readdirSync(join(out, "trajectories"))) {
      const sent = readFileSync(join(out, "trajectories", f), "utf8");
      const i = Number(/test-(\d+)/.exec(f)?.[1]);
      // The worked solution and its "#### n" line are the gold: none of it appears in what the model saw.
      expect(sent).not.toContain((gold[i] as string).split("\n")[0]);
    }
  });

  it("trains the QA harness for two epochs from a config file", async () => {
    const dir = tempDir();
    write(
      join(dir, "sum.diff"),
      "diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -2,3 +2,3 @@\n final_answer exactly once with your answer in the requested format.\n \n-hone-hint: qa_strategy=last\n+hone-hint: qa_strategy=sum\n",
    );
    write(
      join(dir, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 12, data_dir: ${data}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\npatch_surface: ["prompt.md", "agent.yaml"]\n`,
    );
    const r = await hone(["train", "--config", join(dir, "train.yaml"), "--epochs", "2", "--out", join(dir, "run"), "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.epochs.length).toBeGreaterThan(0);
    for (const e of out.epochs) if (e.promoted) expect(e.candidate_solved).toBeGreaterThan(e.baseline_solved);
    const bad = await hone(["train", "--config", join(dir, "sum.diff")]);
    expect(bad.code).toBe(5);
  });
});
