import { type ChildProcess, execFileSync, spawn } from "node:child_process";
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

/**
 * The zygote's rule for a call past its deadline, on a call whose process never ends (a kill that cannot land, as
 * for a process stuck in the kernel): killed at its deadline, answered at its end, or KILL_WAIT after the kill.
 */
const STUCK_CALL = `
import os, socket, sys, time, types
sys.path.insert(0, sys.argv[1])
import hone_program_zygote as z

class Stuck(z.Call):
    def __init__(self):
        self.pid, self.channel, self.pidfd = -1, None, os.pipe()[0]
        self.taken, self.deadline, self.killed_at, self.answered, self.timeout = True, None, None, False, 1.0
        ours, self.conn = socket.socketpair()
        self.ours, self.kills = ours, 0
    def kill(self, group=False):
        self.kills += 1

def said(c):
    c.ours.setblocking(False)
    try:
        return c.ours.recv(1 << 16).decode()
    except BlockingIOError:
        return ""

zy = z.Zygote.__new__(z.Zygote)
zy.host = types.SimpleNamespace(contained=True)
c = Stuck()
zy.calls = [c]
c.deadline = time.monotonic() - 0.01
zy._handle({}, {})
print("killed", c.kills, "answered", c.answered, repr(said(c)), "wake", c.wake() - c.killed_at)
zy._handle({}, {})
print("killed", c.kills, "answered", c.answered, repr(said(c)))
c.killed_at -= z.KILL_WAIT
zy._handle({}, {})
print("killed", c.kills, "answered", c.answered, said(c).split("\\n", 1)[1])
`;

describe("the program zygote", () => {
  it("answers a call killed at its deadline only once it has ended, or KILL_WAIT after the kill if it never does", () => {
    const out = execFileSync("python3", ["-c", STUCK_CALL, PYTHON_DIR], { encoding: "utf8" }).trim().split("\n");
    expect(out).toEqual([
      "killed 1 answered False '' wake 5.0",
      "killed 1 answered False ''",
      `killed 1 answered True {"ok": false, "error": "the program did not return within 1 s"}`,
    ]);
  });

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
