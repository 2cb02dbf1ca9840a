// The console at scale (issue 19): the run page of synthetic runs of 1k, 10k and 50k rollouts, and of the 50k run
// as an older hone wrote it (without this version's indexes; the console opens runs read-only and cannot add
// them). "Cold" is the first run page a fresh `hone view` process serves, one process per repetition; "warm" is
// the same page again from that process. Then the live updates: many clients on one run, one file watcher.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, readdirSync, readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { writeSyntheticRun } from "../test/helpers/synthetic-run.ts";
import { benchDir, forwardStderr, honeCli, median, report, timeIt } from "./lib.ts";

const GOAL_MS = 300;
const REPETITIONS = 5;
const WARM = 15;
const CLIENTS = 50;
const SIZES = [
  { id: "1k", rounds: 20, perRound: 50 },
  { id: "10k", rounds: 100, perRound: 100 },
  { id: "50k", rounds: 250, perRound: 200 },
];
const NEW_INDEXES = ["rollouts_candidate", "candidates_commit", "candidates_parent"];

/**
 * What the run page asks for when it opens: the page itself, the first page of the round table, the lineage's top,
 * and the first page of its per-task results (empty for a discovery run).
 */
const runPageUrls = (base: string, id: string) => [
  `${base}/api/runs/${id}`,
  `${base}/api/runs/${id}/candidates?offset=0&limit=100`,
  `${base}/api/runs/${id}/lineage?offset=0&limit=200`,
  `${base}/api/runs/${id}/tasks?offset=0&limit=100`,
];

async function loadRunPage(base: string, id: string): Promise<{ ms: number; bytes: number }> {
  let bytes = 0;
  const ms = await timeIt(async () => {
    const bodies = await Promise.all(
      runPageUrls(base, id).map(async (u) => {
        const r = await fetch(u);
        if (!r.ok) throw new Error(`${u}: ${r.status} ${await r.text()}`);
        return r.arrayBuffer();
      }),
    );
    bytes = bodies.reduce((n, b) => n + b.byteLength, 0);
  });
  return { ms, bytes };
}

/** `hone view` in a process of its own, as a user starts it. */
function startView(root: string): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(honeCli(), ["view", root, "--port", "0", "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    forwardStderr(child);
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      if (!out.includes("\n")) return;
      const stop = () =>
        new Promise<void>((done) => {
          child.once("close", () => done());
          child.kill("SIGTERM");
        });
      resolve({ url: (JSON.parse(out.slice(0, out.indexOf("\n"))) as { url: string }).url, child, stop });
    });
    child.once("close", (code) => reject(new Error(`hone view exited with ${code}`)));
  });
}

/** CPU milliseconds a process's threads have run so far (Linux schedstat, in nanoseconds). */
const cpuMs = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).reduce((ms, task) => {
    try {
      return ms + Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]) / 1e6;
    } catch {
      return ms; // a thread that ended meanwhile
    }
  }, 0);

const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0] as number, median: median(s), max: s.at(-1) as number, p95: s[Math.floor(s.length * 0.95)] as number };
};
const fmt = (x: number) => `${x.toFixed(0)} ms`;

async function measureRun(root: string, id: string) {
  const cold: number[] = [];
  const coldCpu: number[] = [];
  const warm: number[] = [];
  let bytes = 0;
  for (let rep = 0; rep < REPETITIONS; rep++) {
    const view = await startView(root);
    try {
      const before = cpuMs(view.child.pid as number);
      const first = await loadRunPage(view.url, id);
      coldCpu.push(cpuMs(view.child.pid as number) - before);
      cold.push(first.ms);
      bytes = first.bytes;
      if (rep === REPETITIONS - 1) for (let i = 0; i < WARM; i++) warm.push((await loadRunPage(view.url, id)).ms);
    } finally {
      await view.stop();
    }
  }
  return { cold: spread(cold), coldCpu: spread(coldCpu), warm: spread(warm), bytes, coldSamples: cold, warmSamples: warm };
}

/** Many live clients on one run: the server's CPU while nothing changes, and how long an update takes to reach all. */
async function measureLive(root: string, id: string) {
  const view = await startView(root);
  const controller = new AbortController();
  try {
    const seen = Array.from({ length: CLIENTS }, () => 0);
    const streams = seen.map(async (_, k) => {
      const r = await fetch(`${view.url}/api/runs/${id}/events`, { signal: controller.signal });
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      for (;;) seen[k] = (seen[k] as number) + (decoder.decode((await reader.read()).value).match(/event: update/g) ?? []).length;
    });
    void Promise.allSettled(streams);
    while (seen.some((n) => n < 1)) await new Promise((r) => setTimeout(r, 20));
    const pid = view.child.pid as number;
    const before = cpuMs(pid);
    await new Promise((r) => setTimeout(r, 3000));
    const idle = (cpuMs(pid) - before) / 3;
    const db = new Database(join(root, id, "hone.db"));
    const t = performance.now();
    db.prepare(
      "INSERT INTO rounds (run_id, round, status, incumbent_commit, started_at, finished_at) VALUES ('run', 100000, 'finished', 'x', 'now', 'now')",
    ).run();
    db.close();
    while (seen.some((n) => n < 2)) await new Promise((r) => setTimeout(r, 2));
    return { idle, fanout: performance.now() - t };
  } finally {
    controller.abort();
    await view.stop();
  }
}

export async function benchConsole(): Promise<boolean> {
  const root = benchDir("console");
  const counts: Record<string, number> = {};
  for (const s of SIZES)
    counts[s.id] = (
      await writeSyntheticRun(join(root, s.id), { rounds: s.rounds, perRound: s.perRound, programBytes: 2000 })
    ).rollouts;
  cpSync(join(root, "50k"), join(root, "50k-old"), { recursive: true });
  const old = new Database(join(root, "50k-old", "hone.db"));
  for (const name of NEW_INDEXES) old.exec(`DROP INDEX ${name}`);
  old.close();
  const load = () => loadavg()[0]?.toFixed(1);
  const rows: [string, string][] = [["machine", `${availableParallelism()} cores, load average ${load()} at the start`]];
  const results: Record<string, Awaited<ReturnType<typeof measureRun>>> = {};
  for (const id of [...SIZES.map((s) => s.id), "50k-old"]) {
    const m = await measureRun(root, id);
    results[id] = m;
    const n = (counts[id.replace("-old", "")] as number).toLocaleString("en-US");
    const label = `run page, ${n} rollouts${id.endsWith("-old") ? ", without the new indexes" : ""}`;
    rows.push([
      label,
      `cold ${fmt(m.cold.min)} / ${fmt(m.cold.median)} / ${fmt(m.cold.max)} (min / median / max of ${REPETITIONS} fresh processes; server CPU median ${fmt(m.coldCpu.median)}), warm median ${fmt(m.warm.median)}, p95 ${fmt(m.warm.p95)}; ${(m.bytes / 1024).toFixed(0)} KiB`,
    ]);
  }
  const live = await measureLive(root, "50k");
  rows.push([
    `${CLIENTS} live clients on the 50k run`,
    `server CPU ${live.idle.toFixed(0)} ms per second while idle; an update reached all of them in ${fmt(live.fanout)}`,
  ]);
  (rows[0] as [string, string])[1] += `, ${load()} at the end (other work on the machine slows every figure)`;
  const pages = runPageUrls("", "").length;
  const goal = (what: string, samples: number[] | undefined) => ({
    goal: {
      figure: `the run page (its ${pages} requests) at 50,000 rollouts, ${what}`,
      op: "<=" as const,
      value: GOAL_MS,
      unit: " ms",
    },
    samples: samples ?? [Number.POSITIVE_INFINITY],
  });
  return report(
    "console (issue 19): the run page at 1k, 10k and 50k rollouts, each first request in a fresh hone view process",
    rows,
    [
      goal("cold (first request of a fresh process)", results["50k"]?.coldSamples),
      goal("warm", results["50k"]?.warmSamples),
      goal("cold, without the new indexes", results["50k-old"]?.coldSamples),
    ],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchConsole();
