import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_PROPOSER_HARNESS, optimize } from "../../src/loop/optimize.ts";
import { DEFAULT_HARNESS } from "../../src/loop/run.ts";
import { startOfflineServer } from "../../src/model/offline/server.ts";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { startFaultProxy } from "../helpers/fault-proxy.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe("faults survived", () => {
  it("an optimize run through a 20% fault-injecting endpoint completes, records each fault and loses no rollout", async () => {
    const offline = await startOfflineServer();
    closers.push(offline.close);
    const proxy = await startFaultProxy(offline.url, { rate: 0.2, seed: 11, timeoutDelayMs: 1500 });
    closers.push(proxy.close);
    const model = {
      model: "offline",
      baseUrl: proxy.url,
      timeouts: { attempt: 0.6 },
      retry: { maxAttempts: 8, baseDelayMs: 5, maxDelayMs: 40 },
    };
    const out = join(tempDir(), "faults");
    const result = await optimize(
      {
        task: "circle-packing",
        seedHarness: DEFAULT_HARNESS,
        proposerHarness: DEFAULT_PROPOSER_HARNESS,
        executor: model,
        proposer: model,
        rounds: 2,
        proposals: 3,
        maxEvals: 5,
        concurrency: 3,
        paired: false,
        seed: 3,
        warmPool: true,
        cache: { mode: "off" },
        learning: { mode: "context", digestTokens: 1000 },
      },
      { outDir: out },
    );
    expect(result.bestScore).not.toBeNull();
    const injected = Object.values(proxy.injected).reduce((a, b) => a + b, 0);
    expect(injected).toBeGreaterThan(5);
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const faults = (db.prepare("SELECT faults FROM model_calls WHERE faults IS NOT NULL").all() as { faults: string }[]).flatMap(
      (r) => JSON.parse(r.faults) as { kind: string }[],
    );
    const kinds = new Set(faults.map((f) => f.kind));
    // Every retried fault is on record (malformed arguments are not retried: they go back to the model as tool errors).
    const retriedInjected = injected - proxy.injected.malformed_args;
    expect(faults.length).toBe(retriedInjected);
    for (const k of ["rate_limited", "server_error"])
      if (proxy.injected[k === "rate_limited" ? "429" : "500"] > 0) expect(kinds).toContain(k);
    // No rollout lost: one per valid candidate plus the seed round's (a round the proposal gate failed rolls out none).
    const candidates = db
      .prepare(
        "SELECT COUNT(*) AS n FROM candidates c JOIN rounds r ON r.round = c.round WHERE c.commit_sha IS NOT NULL AND r.status != 'failed'",
      )
      .get() as { n: number };
    const rollouts = db.prepare("SELECT status, error FROM rollouts").all() as { status: string; error: string | null }[];
    expect(rollouts.length).toBe(candidates.n);
    // A failed rollout (retries exhausted) carries its reason and no score reaches the ratchet or the rewards.
    for (const r of rollouts.filter((x) => x.status === "failed")) expect(r.error).toMatch(/gave up after/);
    db.close();
  });
});

describe("crash safety", () => {
  it("kill -9 at many random points never corrupts hone.db or the git repository, and --resume always continues", {
    timeout: 240_000,
  }, async () => {
    const args = optimizeArgs({ rounds: 2, proposals: 2, maxEvals: 4, seed: 9, json: false });
    const reference = join(tempDir(), "ref");
    expect((await hone([...args, "--out", reference, "--json"])).code).toBe(0);
    const summary = (dir: string) => {
      const db = new Database(join(dir, "hone.db"), { readonly: true });
      const s = JSON.parse((db.prepare("SELECT summary FROM runs").get() as { summary: string }).summary);
      db.close();
      return s;
    };
    const out = join(tempDir(), "crashy");
    // Kill the same run again and again at pseudo-random moments, resuming after each kill.
    const delays = [450, 900, 1300, 650, 1700, 800, 1100, 2000];
    for (const delay of delays) {
      // Until hone.db exists there is nothing to resume: start afresh (the folder is still empty then).
      const again = existsSync(join(out, "hone.db")) ? ["optimize", "--resume", out] : [...args, "--out", out];
      const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...again, "--json"], { cwd: ROOT, stdio: "ignore" });
      const closed = new Promise((r) => child.on("close", r));
      await new Promise((r) => setTimeout(r, delay + 1000));
      child.kill("SIGKILL");
      await closed;
      if (!existsSync(join(out, "hone.db"))) continue;
      const db = new Database(join(out, "hone.db"));
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      db.close();
      if (existsSync(join(out, "harnesses.git", "HEAD")))
        execFileSync("git", ["--git-dir", join(out, "harnesses.git"), "fsck", "--strict", "--no-progress"], { stdio: "pipe" });
    }
    const last = await hone(
      existsSync(join(out, "hone.db")) ? ["optimize", "--resume", out, "--json"] : [...args, "--out", out, "--json"],
    );
    expect(last.code, last.stderr).toBe(0);
    expect(summary(out)).toEqual(summary(reference));
  });
});
