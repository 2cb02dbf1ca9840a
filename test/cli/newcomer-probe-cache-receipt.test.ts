import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone, killAfterLine, optimizeArgs } from "../helpers/cli.ts";
import { GSM8K_FIXTURE, tempDir } from "../helpers/fixtures.ts";

// What a newcomer meets with `hone cache`, `--cache replay` and `hone receipt`: every message says what to do, every
// exit code is the README table's, and looking at a cache makes nothing.
describe("newcomer probe: the request cache and receipts from the command line", () => {
  it("cache stats and clear on a folder with no cache create nothing; a huge --older-than is no internal error", async () => {
    const dir = tempDir();
    const typo = join(dir, "no-such-cache");
    const stats = await hone(["cache", "stats", "--cache-dir", typo, "--json"]);
    expect(stats.code, stats.stderr).toBe(0);
    expect(JSON.parse(stats.stdout)).toMatchObject({ exists: false, entries: 0 });
    const text = await hone(["cache", "stats", "--cache-dir", typo]);
    expect(text.stdout).toMatch(/no request cache here yet/);
    const clear = await hone(["cache", "clear", "--cache-dir", typo, "--older-than", "14d"]);
    expect(clear.code, clear.stderr).toBe(0);
    expect(existsSync(typo)).toBe(false);

    const cache = join(dir, "cache");
    expect(
      (await hone(optimizeArgs({ rounds: 1, proposals: 1, maxEvals: 2, cache: ["--cache-dir", cache], out: join(dir, "run") })))
        .code,
    ).toBe(0);
    const ancient = await hone(["cache", "clear", "--cache-dir", cache, "--older-than", "99999999999999999999d"]);
    expect(ancient.code, ancient.stderr).toBe(0);
    expect(ancient.stdout).toMatch(/removed 0 cached response/);
    expect(JSON.parse((await hone(["cache", "stats", "--cache-dir", cache, "--json"])).stdout).entries).toBeGreaterThan(0);
  });

  it("a cache folder that cannot be written is the user's to fix (exit 2, naming it), not a bug", async () => {
    const dir = tempDir();
    const file = join(dir, "a-file");
    writeFileSync(file, "not a folder\n");
    const r = await hone(
      optimizeArgs({ rounds: 1, proposals: 1, maxEvals: 2, cache: ["--cache-dir", file], out: join(dir, "run") }),
    );
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`the request cache ${join(file, "requests.db")} cannot be opened`);
    expect(r.stderr).toMatch(/--cache-dir or HONE_CACHE_DIR, or run with --cache off/);
    expect(r.stderr).not.toMatch(/internal error/);
  });

  it("--cache replay on a cache without the run's requests names the cache and the ways out (exit 7)", async () => {
    const dir = tempDir();
    const cache = join(dir, "empty-cache");
    const r = await hone(
      optimizeArgs({
        rounds: 1,
        proposals: 2,
        maxEvals: 3,
        cache: ["--cache", "replay", "--cache-dir", cache],
        out: join(dir, "run"),
      }),
    );
    expect(r.code, r.stderr).toBe(7);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.stderr).toContain(`--cache replay: this request was never recorded in ${join(cache, "requests.db")}`);
    expect(r.stderr).toMatch(/run with --cache read-write/);
  });

  it("the receipt of a run killed mid-way does not call it running, and says how it continues", async () => {
    const run = join(tempDir(), "run");
    await killAfterLine(optimizeArgs({ rounds: 2, proposals: 2, maxEvals: 3, out: run, json: false }), /^round 0:/);
    const line = (await hone(["receipt", run])).stdout.split("\n")[0];
    expect(line).toMatch(
      /^run\s+optimize, running or stopped before it finished \(`npx hone optimize --resume <run-dir>` continues it\)/,
    );
  });

  it("an eval's receipt says what was measured and by which scorer", async () => {
    const dir = tempDir();
    const run = join(dir, "eval");
    const args = ["eval", "--harness", "harnesses/qa", "--benchmark", "gsm8k", "--split", "test", "--limit", "3"];
    const e = await hone([...args, "--model", "offline", "--data-dir", join(GSM8K_FIXTURE, ".."), "--out", run]);
    expect(e.code, e.stderr).toBe(0);
    const text = (await hone(["receipt", run])).stdout;
    expect(text).toMatch(/^scorer\s+gsm8k's official scorer: strict-match \(the accuracy\), flexible-extract$/m);
    expect(text).toMatch(/^measured\s+1 QA measurements \(3 task results\)$/m);
  });
});
