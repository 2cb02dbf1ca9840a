import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { running as alive, descendants } from "../../src/cli/shutdown.ts";
import { optimize } from "../../src/loop/optimize.ts";
import { optimizeArgs } from "../helpers/cli.ts";
import { makeTask, ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// Every long command stops on SIGINT/SIGTERM and nothing it started outlives it. The runs here never race the
// signal: their evaluator blocks on any program but the seed, in a `sleep` child the test waits to see among the
// command's processes, so the command is certainly mid-evaluation when it is asked to stop.

const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** A task whose evaluator scores the seed at once and blocks in a `sleep 600` child on anything else. */
function blockingTask(): string {
  return makeTask(
    "import subprocess\ndef evaluate(program_path):\n    if 'X = 1.0' not in open(program_path).read():\n        subprocess.run(['sleep', '600'])\n    return {'combined_score': 1.0}\n",
    { timeout: 900 },
  );
}

/** Whether `pid` has a descendant running `sleep` (the blocking evaluator is mid-evaluation). */
const evaluating = (pid: number | undefined) => () =>
  descendants(pid as number).some((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, "utf8").trim() === "sleep";
    } catch {
      return false;
    }
  });

interface Running {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function start(args: string[]): Running {
  const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.push(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

/** Resolves once `ready()` holds, checking on each output chunk and otherwise every 50 ms. */
async function until(ready: () => boolean, what: string, r?: Running): Promise<void> {
  for (let i = 0; i < 2400 && !ready(); i++) {
    if (r && r.child.exitCode !== null) throw new Error(`exited before ${what}:\n${r.out()}\n${r.err()}`);
    await new Promise((done) => setTimeout(done, 50));
  }
  if (!ready()) throw new Error(`never saw ${what}`);
}

describe("stopping long commands", () => {
  it("hone run stops on SIGTERM mid-evaluation: exit 143, no half-written folder, no process left", async () => {
    const dir = tempDir();
    const r = start(["run", "--task", blockingTask(), "--model", "offline", "--max-evals", "5", "--out", join(dir, "run")]);
    await until(evaluating(r.child.pid), "the evaluation start", r);
    const pids = descendants(r.child.pid as number);
    expect(pids.length).toBeGreaterThan(0);
    r.child.kill("SIGTERM");
    expect(await r.exited).toBe(143);
    expect(r.err()).toMatch(/SIGTERM: stopping/);
    expect(readdirSync(dir)).toEqual([]);
    expect(pids.filter(alive)).toEqual([]);
  });

  it("hone optimize stops on SIGINT, says how to resume, and leaves no process", async () => {
    const dir = tempDir();
    const out = join(dir, "run");
    const r = start(["optimize", "--task", blockingTask(), "--rounds", "1", "--max-evals", "3", "--cache", "off", "--out", out]);
    await until(evaluating(r.child.pid), "the evaluation start", r);
    const pids = descendants(r.child.pid as number);
    r.child.kill("SIGINT");
    expect(await r.exited).toBe(130);
    expect(r.err()).toContain(`continue the run with: npx hone optimize --resume ${out}`);
    expect(pids.filter(alive)).toEqual([]);
  });
});

describe("stopping hone train", () => {
  it("mid-epoch on SIGINT: exit 130, says how to resume, keeps the run, and leaves no process", async () => {
    const dir = tempDir();
    const out = join(dir, "run");
    const data = join(ROOT, "test", "fixtures", "datasets");
    // Its agent CLI (the epoch's proposal) blocks in a `sleep` child until the stop.
    writeFileSync(
      join(dir, "train.yaml"),
      `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 2, data_dir: ${data}}\nestimator: {kind: agent_cli, command: "sleep 600"}\ncriterion: {kind: strict_pareto}\n`,
    );
    const r = start(["train", "--config", join(dir, "train.yaml"), "--epochs", "1", "--out", out]);
    await until(evaluating(r.child.pid), "the agent CLI's start", r);
    const pids = descendants(r.child.pid as number);
    r.child.kill("SIGINT");
    expect(await r.exited).toBe(130);
    expect(r.err()).toContain(`continue the run with: npx hone train --resume ${out}`);
    expect(readdirSync(out)).toContain("hone.db");
    expect(pids.filter(alive)).toEqual([]);
  });
});

describe("stopping hone eval", () => {
  it("keeps what it measured and says where; a replay of it says it cannot resume instead of naming a --resume", async () => {
    const dir = tempDir();
    const out = join(dir, "eval");
    // Every model call waits ten minutes: the eval is certainly mid-measurement once its hone.db is there.
    const data = join(ROOT, "test", "fixtures", "datasets");
    const r = start(
      ["eval", "--harness", join(ROOT, "harnesses", "qa"), "--benchmark", "gsm8k", "--split", "test", "--limit", "2"].concat([
        "--data-dir",
        data,
        "--model",
        "offline",
        "--offline-latency-ms",
        "600000",
        "--out",
        out,
      ]),
    );
    await until(() => existsSync(join(out, "hone.db")), "the eval's hone.db", r);
    r.child.kill("SIGINT");
    expect(await r.exited).toBe(130);
    expect(r.err()).toContain(`hone: stopped; the tasks measured so far are in ${out} (an eval does not resume)`);
    expect(readdirSync(out)).toContain("hone.db");
    const replay = start(["replay", out]);
    expect(await replay.exited).toBe(2);
    expect(replay.err()).toContain(
      `${out} has not finished (it was stopped or failed before its end), and hone eval does not resume`,
    );
    expect(replay.err()).not.toContain("--resume");
  });
});

describe("stopping hone replay", () => {
  // A replay serves every evaluation from the run's records, so nothing in it blocks: the run replayed is long (8
  // rounds) and the stop is sent from the handler of the output that says its first round has begun, with seven
  // rounds (~1 s of work here) still to go.
  it("leaves no folder: not the one it named, nor an --out it made, and an --out that was there keeps nothing", {
    timeout: 180_000,
  }, async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const small = { rounds: 8, proposals: 2, maxEvals: 2, noiseRepeats: 1, cache: { mode: "off" as const } };
    await optimize(
      { task: "circle-packing", executor: { model: "offline" }, proposer: { model: "offline" }, ...small },
      { outDir: run },
    );
    mkdirSync(join(dir, "empty"));
    for (const out of [[], ["--out", join(dir, "new")], ["--out", join(dir, "empty")]]) {
      const r = start(["replay", run, ...out]);
      const round1 = () => r.out().includes("round 1: incumbent");
      let sent = false;
      r.child.stdout?.on("data", () => {
        if (sent || !round1()) return;
        sent = true;
        r.child.kill("SIGINT");
      });
      await until(round1, "round 1", r);
      expect(await r.exited, r.out()).toBe(130);
      expect(r.err()).toMatch(/SIGINT: stopping/);
      expect(r.err()).not.toMatch(/could not be removed/);
      expect(readdirSync(dir).sort()).toEqual(["empty", "run"]);
      // An --out that was there stays, holding nothing a run counts (its lock file, as a failed start leaves it).
      expect(readdirSync(join(dir, "empty")).filter((f) => f !== "hone.lock")).toEqual([]);
    }
    // The name a stopped replay took is free again.
    const again = start(["replay", run, "--json"]);
    expect(await again.exited, again.err()).toBe(0);
    expect(JSON.parse(again.out())).toMatchObject({ replay: join(dir, "run-replay"), matches: true });
  });
});

describe("stopping hone view", () => {
  it("stops on SIGTERM with a live event stream open: exit 0", async () => {
    const v = start(["view", tempDir(), "--port", "0", "--json"]);
    await until(() => v.out().includes("\n"), "the address", v);
    const { url } = JSON.parse(v.out().split("\n")[0] as string);
    const res = await fetch(`${url}/api/events`);
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = res.body?.getReader();
    await reader?.read();
    v.child.kill("SIGTERM");
    expect(await v.exited).toBe(0);
    await reader?.cancel().catch(() => undefined);
  });
});

// A redis-server of the test's own on a free loopback port.
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.on("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => {
      s.destroy();
      resolve(String(d).startsWith("+PONG"));
    });
    s.on("error", () => resolve(false));
  });
async function redis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  started.push(server);
  const gone = new Promise<void>((resolve) => server.on("close", () => resolve()));
  let up = false;
  for (let i = 0; i < 200 && !up; i++) {
    up = await answers(port);
    if (!up) await new Promise((r) => setTimeout(r, 50));
  }
  if (!up) throw new Error("redis-server did not answer");
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () => {
      server.kill("SIGTERM");
      return gone;
    },
  };
}

const worker = (url: string, extra: string[] = []) =>
  start(["worker", "--queue", url, "--concurrency", "1", "--lock-duration-ms", "2000", ...extra]);

describe("stopping hone worker", () => {
  it("stops on SIGTERM once its Redis is gone: exit 0, one line about the lost queue, no stacks", async (ctx) => {
    requireTool(ctx, "redis-server");
    const q = await redis();
    const w = worker(q.url);
    await until(() => / ready on /.test(w.out()), "the worker ready", w);
    await q.stop();
    await until(() => /is not answering/.test(w.out()), "the lost queue reported", w);
    w.child.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    expect(w.out()).toMatch(/worker stopped/);
    expect(w.out().match(/is not answering/g)).toHaveLength(1);
    expect(`${w.out()}${w.err()}`).not.toMatch(/ECONNREFUSED[\s\S]*at .*\(node:/);
  });

  it("finishes the job in hand when asked to stop, and returns it when the stop timeout is over", {
    timeout: 180_000,
  }, async (ctx) => {
    requireTool(ctx, "redis-server");
    const q = await redis();
    const dir = tempDir();
    // The seed round's job finishes on worker A, which was asked to stop while running it.
    const a = worker(q.url);
    await until(() => / ready on /.test(a.out()), "worker A ready", a);
    const coordinator = start([
      ...optimizeArgs({ rounds: 1, proposals: 1, maxEvals: 3, out: join(dir, "run") }),
      "--queue",
      q.url,
    ]);
    await until(() => / runs r00-seed/.test(a.out()), "worker A taking the seed job", a);
    a.child.kill("SIGTERM");
    expect(await a.exited).toBe(0);
    expect(a.out()).not.toMatch(/not finished/);
    // Worker B takes the rest; the run completes with every job counted once.
    const b = worker(q.url);
    expect(await coordinator.exited).toBe(0);
    expect(b.out()).not.toMatch(/ runs r00-seed/);
    b.child.kill("SIGTERM");
    expect(await b.exited).toBe(0);

    // A job that cannot finish within --stop-timeout is given back to the queue, and its evaluator is killed.
    const c = worker(q.url, ["--stop-timeout", "1"]);
    await until(() => / ready on /.test(c.out()), "worker C ready", c);
    const stuck = start([
      "optimize",
      "--task",
      blockingTask(),
      "--rounds",
      "1",
      "--max-evals",
      "3",
      "--cache",
      "off",
      "--queue",
      q.url,
      "--out",
      join(dir, "stuck"),
    ]);
    await until(evaluating(c.child.pid), "worker C evaluating", c);
    const pids = descendants(c.child.pid as number);
    c.child.kill("SIGTERM");
    expect(await c.exited).toBe(0);
    expect(c.out()).toMatch(/1 job\(s\) not finished; they return to the queue/);
    expect(pids.filter(alive)).toEqual([]);
    stuck.child.kill("SIGTERM");
    expect(await stuck.exited).toBe(143);
    await q.stop();
  });
});
