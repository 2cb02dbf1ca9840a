import { type ChildProcess, spawn } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PYTHON_DIR } from "../../src/task/python-env.ts";
import { tempDir } from "../helpers/fixtures.ts";

// The program zygote spoken to as an evaluator speaks to it (hone_runtime): one request line, one framed reply.
// Started directly (no bubblewrap): its calls still get namespaces of their own where user namespaces work.

let zygote: ChildProcess | undefined;
afterEach(() => zygote?.kill("SIGKILL"));

/** Starts a zygote with `slots` evaluators' worth of calls; resolves with its socket's path once it is ready. */
async function startZygote(slots: number): Promise<string> {
  const socket = join(tempDir(), "z.sock");
  const config = { socket, preload: ["json"], limits: {}, slots, parent: process.pid };
  zygote = spawn("python3", [join(PYTHON_DIR, "hone_program_zygote.py"), JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve) => zygote?.stdout?.on("data", (d) => /"ready": true/.test(String(d)) && resolve()));
  return socket;
}

/** One call: the request's line out, the reply's frame back (its JSON), or undefined when the connection ends first. */
function call(socket: string, program: string, timeout: number): Promise<unknown> {
  return new Promise((resolve) => {
    const c = connect(socket);
    let got = Buffer.alloc(0);
    c.on("data", (d) => {
      got = Buffer.concat([got, d]);
      const nl = got.indexOf(10);
      const size = nl > 0 ? Number(got.subarray(0, nl).toString()) : Number.NaN;
      if (got.length >= nl + 1 + size) {
        c.end();
        resolve(JSON.parse(got.subarray(nl + 1, nl + 1 + size).toString()));
      }
    });
    c.on("close", () => resolve(undefined));
    c.on("error", () => resolve(undefined));
    c.write(`${JSON.stringify({ program, ext: ".py", entry: "run", args: [], timeout, memory_mb: 0 })}\n`);
  });
}

describe("the program zygote", () => {
  it("times out each of several calls taken at once, each at its own timeout", async () => {
    const socket = await startZygote(6);
    await new Promise((r) => setTimeout(r, 1000)); // its calls made ahead are waiting
    const hang = "import time\ndef run():\n    time.sleep(300)\n";
    const started = performance.now();
    const replies = await Promise.all(Array.from({ length: 6 }, () => call(socket, hang, 1)));
    expect(replies).toEqual(Array(6).fill({ ok: false, error: "the program did not return within 1 s" }));
    expect(performance.now() - started).toBeLessThan(10_000);
    // and it goes on serving
    expect(await call(socket, "def run():\n    return 7\n", 10)).toEqual({ ok: true, value: 7 });
  }, 30_000);
});
