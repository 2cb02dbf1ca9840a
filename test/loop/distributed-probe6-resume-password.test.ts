import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { passwordRedis, started, stopped } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// A run on a queue whose Redis wants a password stores the URL without it, and asks for the URL again on --resume.
// Given again, `hone optimize --resume <run> --queue redis://:pw@…` was still refused ("hone never stores a password:
// resume it with --queue <the URL with its password>", exit 2): the command read the run's stored settings before it
// took the --queue given, so such a run could never be resumed.

const PASSWORD = "probe6-resume-pw-8c2a";
const procs: ChildProcess[] = [];
let url = "";

beforeAll(async () => {
  if (missing("redis-server")) return;
  const { port, redis } = await passwordRedis(PASSWORD);
  procs.push(redis);
  url = `redis://:${PASSWORD}@127.0.0.1:${port}`;
  procs.push(await started(process.execPath, [join(ROOT, "bin", "hone.js"), "worker", "--queue", url], / ready on /));
}, 90_000);

afterAll(async () => {
  for (const p of procs.reverse()) await stopped(p);
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

/** Every file under `dir`, as text. */
const texts = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? texts(path) : [readFileSync(path, "latin1")];
  });

describe("a run on a queue whose URL has a password", () => {
  it("resumes with the URL given again, and keeps the password out of the run", { timeout: 240_000 }, async () => {
    const out = join(tempDir("hone-probe6-resume-"), "run");
    const first = await hone([...optimizeArgs({ rounds: 1, proposals: 1, maxEvals: 2, out }), "--queue", url]);
    expect(first.code, first.stderr).toBe(0);
    // Without the URL: asked for it, naming the flag.
    const bare = await hone(["optimize", "--resume", out, "--rounds", "2", "--json"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/hone never stores a password: resume it with --queue <the URL with its password>/);
    const resumed = await hone(["optimize", "--resume", out, "--rounds", "2", "--json", "--queue", url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).rounds).toHaveLength(3);
    for (const r of [first, bare, resumed]) expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    expect(texts(out).some((t) => t.includes(PASSWORD))).toBe(false);
  });
});
