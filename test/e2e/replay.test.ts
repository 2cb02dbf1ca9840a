import { cpSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { CIRCLE_PACKING, INITIAL_HARNESS, ROOT, tempDir } from "../helpers/fixtures.ts";

describe("replay, receipts and the request cache (CLI)", () => {
  it("replays a finished run with no endpoint and reproduces every record field by field", { timeout: 180_000 }, async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const cache = join(dir, "cache");
    const r = await hone(optimizeArgs({ rounds: 2, proposals: 3, maxEvals: 5, cache: ["--cache-dir", cache], out: run }));
    expect(r.code, r.stderr).toBe(0);
    // The offline model is gone (it only ever lived inside the first process); replay needs no endpoint at all.
    const replay = await hone(["replay", run, "--out", join(dir, "replayed"), "--json"]);
    expect(replay.code, replay.stderr).toBe(0);
    const out = JSON.parse(replay.stdout);
    expect(out.differences).toEqual([]);
    expect(out.matches).toBe(true);
    expect(out.counts.evaluations).toBeGreaterThan(10);
    const receipt = JSON.parse((await hone(["receipt", join(dir, "replayed"), "--json"])).stdout);
    expect(receipt.settings.cache).toBe("replay");
    expect(receipt.models[0].cache_hits).toBe(receipt.models[0].calls);

    // Replaying again: into the same --out is refused with what to do (replay has no --resume to suggest) ...
    const same = await hone(["replay", run, "--out", join(dir, "replayed")]);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/already exists and is not empty; a replay needs a new folder: choose another --out/);
    expect(same.stderr).not.toMatch(/--resume/);
    // ... and without --out each replay gets a folder of its own, two started at once too (before, both picked
    // run-replay and the second was refused as "being written by another hone process").
    const both = await Promise.all([hone(["replay", run, "--json"]), hone(["replay", run, "--json"])]);
    for (const again of both) expect(again.code, again.stderr).toBe(0);
    const folders = both.map((again) => JSON.parse(again.stdout) as { replay: string; matches: boolean });
    expect(folders.every((f) => f.matches)).toBe(true);
    expect(folders.map((f) => f.replay).sort()).toEqual([join(dir, "run-replay"), join(dir, "run-replay-2")]);
    // Read by four replays and a receipt, neither run keeps a -wal or -shm beside its hone.db.
    for (const folder of [run, join(dir, "replayed")])
      expect(readdirSync(folder).filter((f) => f.startsWith("hone.db"))).toEqual(["hone.db"]);
  });

  it("a replay that cannot begin (its run's harness copy broken) leaves no folder behind", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const run = join(dir, "one");
    const r = await hone(["run", "--task", "circle-packing", "--max-evals", "2", "--out", run]);
    expect(r.code, r.stderr).toBe(0);
    writeFileSync(join(run, "harness", "agent.yaml"), "model: [unclosed\n");
    const replay = await hone(["replay", run]);
    expect(replay.code).toBe(3);
    expect(replay.stderr).toMatch(/agent\.yaml: is not valid YAML/);
    expect(readdirSync(dir)).toEqual(["one"]);
  });

  it("a run started with relative folders replays from any folder, and resumes repeating its command", {
    timeout: 120_000,
  }, async () => {
    const dir = tempDir();
    cpSync(INITIAL_HARNESS, join(dir, "seed"), { recursive: true });
    cpSync(CIRCLE_PACKING, join(dir, "my-task"), { recursive: true });
    const args = (rounds: number) =>
      optimizeArgs({ rounds, proposals: 2, maxEvals: 2, json: false, extra: ["--seed-harness", "seed"] }).map((a) =>
        a === "circle-packing" ? "my-task" : a,
      );
    const first = await hone([...args(1), "--out", "run"], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    // Before, the run recorded "seed" and "my-task" as given, and a replay from elsewhere looked for them there.
    const replay = await hone(["replay", join(dir, "run"), "--json"], { cwd: ROOT });
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout).matches).toBe(true);
    // The same command again with --resume: its relative flags name what the run recorded.
    const resumed = await hone([...args(2), "--resume", "run"], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    // hone run records its task folder the same way.
    const one = await hone(["run", "--task", "my-task", "--max-evals", "2", "--out", "one"], { cwd: dir });
    expect(one.code, one.stderr).toBe(0);
    const again = await hone(["replay", join(dir, "one"), "--json"], { cwd: ROOT });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).matches).toBe(true);
  });

  it("--cache replay with nothing recorded fails with a clear error instead of calling anything", async () => {
    const dir = tempDir();
    const r = await hone(
      optimizeArgs({
        rounds: 1,
        proposals: 2,
        maxEvals: 3,
        cache: ["--cache", "replay", "--cache-dir", join(dir, "empty")],
        out: join(dir, "run"),
        json: false,
      }),
    );
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/replay: this request was never recorded/);
  });

  it("a second identical run is served from the shared cache", { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const args = optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 3, cache: ["--cache-dir", join(dir, "cache")], json: false });
    const a = await hone([...args, "--out", join(dir, "a")]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/model calls {2}executor \d+ \(0 from the cache\), proposer \d+ \(0 from the cache\)/);
    expect(a.stdout).not.toMatch(/request cache/);
    // The second run asks no model anything, and says so on screen.
    const b = await hone([...args, "--out", join(dir, "b")]);
    expect(b.code).toBe(0);
    expect(b.stdout).toMatch(/note: model calls are being answered from the request cache .*cache\/requests.db/);
    expect(b.stdout).toMatch(/note: every model call of this run was answered from the request cache .*cache\/requests.db/);
    const receipt = JSON.parse((await hone(["receipt", join(dir, "b"), "--json"])).stdout);
    expect(receipt.models[0].cache_hits).toBe(receipt.models[0].calls);
    expect(receipt.models[0].latency_ms_p50).toBeNull();
    const stats = await hone(["cache", "stats", "--cache-dir", join(dir, "cache"), "--json"]);
    expect(JSON.parse(stats.stdout).entries).toBeGreaterThan(0);
    const cleared = await hone(["cache", "clear", "--cache-dir", join(dir, "cache")]);
    expect(cleared.stdout).toMatch(/removed \d+ cached response/);
  });

  it("the receipt explains a run: models, task, settings, measurements, failures", async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    expect((await hone(optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 3, out: run, json: false }))).code).toBe(0);
    const text = (await hone(["receipt", run])).stdout;
    for (const part of [
      /task\s+circle-packing \(content [0-9a-f]{12}/,
      /executor\s+offline/,
      /proposer\s+offline/,
      /settings\s+.*seed 0.*cache off/,
      /harnesses\s+.*\d+ candidates \(1 seed, \d+ valid/,
      /measured\s+\d+ rollouts, \d+ evaluations/,
      /^failed\s+(nothing|\d+:)$/m,
    ])
      expect(text).toMatch(part);
    // Readable text: no raw JSON, no empty heading (the failures' own reasons, listed under it, may quote).
    for (const l of text.split("\n").filter((x) => !x.startsWith("  - "))) {
      expect(l).not.toMatch(/[{}"]/);
      expect(l.trim()).not.toMatch(/^[a-z]+$/);
    }
    expect(readFileSync(join(run, "hone.db")).length).toBeGreaterThan(0);
  });
});
