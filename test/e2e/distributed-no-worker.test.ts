import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { freePort, started, stopped } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// `hone optimize --queue` started before its workers (or with a typo in their URL) sat silent on "rolling out the
// seed harness". It now says that no worker is connected and how to start one, and goes on once one is. A Redis of
// this file's own: the count of workers is the whole server's, and other files' workers run on the CI Redis.

let port = 0;
let redis: ChildProcess | undefined;
const procs: ChildProcess[] = [];

beforeAll(async () => {
  if (missing("redis-server")) return;
  port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
  redis = await started("redis-server", args, /Ready to accept connections/);
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

afterAll(async () => {
  for (const p of procs) await stopped(p);
  if (redis) await stopped(redis);
});

const hone = (args: string[]) => {
  const p = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  procs.push(p);
  let output = "";
  p.stdout?.on("data", (d) => (output += d));
  p.stderr?.on("data", (d) => (output += d));
  return { p, output: () => output };
};

describe("a coordinator whose queue has no worker", () => {
  it("says so with the command that starts one, and finishes once one is started", { timeout: 120_000 }, async () => {
    const url = `redis://127.0.0.1:${port}`;
    const out = join(tempDir(), "no-worker");
    const run = hone([...optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 2, seed: 2 }), "--queue", url, "--out", out]);
    const said = new RegExp(
      `no hone worker is connected to the queue at ${url}; \\d+ job\\(s\\) wait for one \\(start one: npx hone worker --queue ${url}\\)`,
    );
    await expect.poll(run.output, { timeout: 60_000, interval: 500 }).toMatch(said);
    const ended = new Promise<number | null>((resolve) => run.p.once("close", resolve));
    hone(["worker", "--queue", url]);
    expect(await ended, run.output()).toBe(0);
    expect(run.output().match(new RegExp(said, "g"))?.length).toBe(1);
  });
});
