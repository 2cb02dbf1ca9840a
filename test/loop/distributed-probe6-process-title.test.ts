import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/fixtures.ts";
import { passwordRedis, stopped } from "../helpers/queue.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// A queue URL's password given on the command line (`hone worker --queue redis://:pw@host`) stood in the process's
// command line for as long as the worker ran (days): any user of the machine reads it with `ps` or from
// /proc/<pid>/cmdline. hone writes the password nowhere else; its process title now shows it as *** too.

const PASSWORD = "probe6-title-pw-5e1f";
let redis: ChildProcess | undefined;
let port = 0;

beforeAll(async () => {
  if (missing("redis-server")) return;
  ({ port, redis } = await passwordRedis(PASSWORD));
}, 30_000);

afterAll(async () => {
  if (redis) await stopped(redis);
});

beforeEach((ctx) => requireTool(ctx, "redis-server"));

/** A `hone worker` with these arguments, once it says it is ready: its command line as `ps` reads it, then stopped. */
async function commandLineOfReadyWorker(args: string[]): Promise<{ cmdline: string; output: string }> {
  const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), "worker", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready line in time:\n${output}`)), 60_000);
      const on = (d: Buffer) => {
        output += String(d);
        if (/ ready on /.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on("data", on);
      child.stderr.on("data", on);
      child.on("close", (code) => reject(new Error(`hone worker exited with ${code}:\n${output}`)));
    });
    return { cmdline: readFileSync(`/proc/${child.pid}/cmdline`, "latin1").replace(/\0+/g, " "), output };
  } finally {
    await stopped(child);
  }
}

describe("a worker started with a queue URL holding a password", () => {
  it("shows the password in its process title as ***, in either way of giving --queue", { timeout: 120_000 }, async () => {
    for (const args of [
      ["--queue", `redis://:${PASSWORD}@127.0.0.1:${port}`, "--concurrency", "1"],
      [`--queue=redis://default:${PASSWORD}@127.0.0.1:${port}/0`, "--concurrency", "1"],
    ]) {
      const { cmdline, output } = await commandLineOfReadyWorker(args);
      expect(output).not.toContain(PASSWORD);
      expect(cmdline).not.toContain(PASSWORD);
      // Still the command that runs: a user's `ps` tells which worker and which queue it is.
      expect(cmdline).toMatch(/hone\.js worker --queue[ =]redis:\/\/(default)?:\*\*\*@127\.0\.0\.1:\d+/);
      expect(cmdline).toContain("--concurrency 1");
    }
  });
});
