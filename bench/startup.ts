// Start-up, whole processes as a user meets them: `hone --help` beside `node -e ""`, and the set-up before round 0
// of `hone optimize` (task checks, records, both offline models and the warm pool) in a fresh process each time: as
// the CLI reports it on its first line (from optimize() being called to round 0), and from spawning it.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createRunDb, openDb } from "../src/store/db.ts";
import { BUILTIN_TASKS_DIR } from "../src/task/builtin.ts";
import { loadTaskFolder } from "../src/task/discovery-task.ts";
import { EvaluatorPool } from "../src/task/evaluator-pool.ts";
import { benchDir, honeCli, report, spread } from "./lib.ts";

const REPS = Number(process.env.BENCH_REPS ?? 10);

/** Seconds one whole process takes: `command` (node itself, or hone as a user starts it) with `args`. */
function wall(command: string, args: string[], env: NodeJS.ProcessEnv = {}): number {
  const t = performance.now();
  execFileSync(command, args, { stdio: "ignore", env: { ...process.env, ...env } });
  return (performance.now() - t) / 1000;
}

/**
 * Seconds from spawning `hone optimize` to its first line ("optimizing … in <dir> (set up in S s)"), printed once
 * set up, and the set-up S it reports there.
 */
function untilFirstLine(out: string): Promise<{ spawn: number; setup: number }> {
  const t = performance.now();
  const child = spawn(
    honeCli(),
    ["optimize", "--task", "circle-packing", "--executor", "offline", "--proposer", "offline"].concat([
      "--rounds",
      "1",
      "--proposals",
      "1",
      "--max-evals",
      "2",
      "--noise-repeats",
      "1",
      "--cache",
      "off",
      "--out",
      out,
    ]),
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    let first: number | undefined;
    let text = "";
    child.stdout.on("data", (d) => {
      first ??= (performance.now() - t) / 1000;
      text += String(d);
    });
    child.on("close", (code) => {
      const setup = Number(/\(set up in ([\d.]+) s\)/.exec(text)?.[1]);
      if (code === 0 && first !== undefined && Number.isFinite(setup)) resolve({ spawn: first, setup });
      else reject(new Error(`hone optimize exited ${code} or printed no set-up time: ${text.slice(0, 300)}`));
    });
  });
}

/** How hone.db was built until now: WAL with synchronous FULL (openDb), the run row, closed (a checkpoint), renamed. */
function runDbBefore(path: string): void {
  const db = openDb(`${path}.new`);
  db.prepare("INSERT INTO runs (id, kind, created_at, status, config) VALUES ('run', 'optimize', ?, 'running', '{}')").run(
    new Date().toISOString(),
  );
  db.close();
  renameSync(`${path}.new`, path);
}

/**
 * A run's hone.db created as optimize's set-up meets it: beside a warm pool that is starting (optimize creates it
 * 0.1-0.25 s after it starts the pool), built as until now and as createRunDb builds it, taking turns. Milliseconds.
 */
async function runDbBesidePool(reps: number): Promise<{ before: number[]; now: number[] }> {
  const task = loadTaskFolder(`${BUILTIN_TASKS_DIR}/circle-packing`, { id: "circle-packing" });
  const dir = benchDir("db");
  const times = { before: [] as number[], now: [] as number[] };
  const build = { before: runDbBefore, now: (p: string) => createRunDb(p, "optimize", {}) };
  for (let i = 0; i < 2 * reps; i++) {
    const way = (i + Math.floor(i / 2)) % 2 === 0 ? "before" : "now"; // each way first in every other pair
    const path = join(dir, String(i), "hone.db");
    mkdirSync(dirname(path));
    const pool = EvaluatorPool.start(task, { size: 1, ahead: 1 });
    await sleep(100);
    const t = performance.now();
    build[way](path);
    times[way].push(performance.now() - t);
    (await pool).close();
    await sleep(300);
  }
  return times;
}

export async function benchStartup(): Promise<boolean> {
  const hone = honeCli(); // dist/ fresh before anything is timed
  const bundled = !process.env.HONE_FROM_SOURCE; // honeCli() made dist/ fresh unless the sources were asked for
  const help: number[] = [];
  const empty: number[] = [];
  const tsx: number[] = [];
  for (let i = 0; i < REPS; i++) {
    empty.push(wall(process.execPath, ["-e", ""]));
    help.push(wall(hone, ["--help"]));
    if (i < 3) tsx.push(wall(hone, ["--help"], { HONE_FROM_SOURCE: "1" }));
  }
  const setup: number[] = [];
  const firstLine: number[] = [];
  const dir = benchDir("startup");
  for (let i = 0; i < Math.ceil(REPS / 2); i++) {
    const run = await untilFirstLine(join(dir, `run-${i}`));
    setup.push(run.setup);
    firstLine.push(run.spawn);
  }
  const runDb = await runDbBesidePool(REPS);
  return report(
    `start-up (issue 19): whole processes, ${REPS} repetitions; hone runs ${bundled ? "its bundle (dist/, fresh)" : "from the sources through tsx (no fresh dist/: npm run build:cli)"}`,
    [
      ['node -e ""', spread(empty, " s", 3)],
      ["hone --help", spread(help, " s", 3)],
      // On a loaded machine every process start is slower; this ratio is the figure the load changes least.
      [
        'hone --help / node -e "" (same repetition)',
        spread(
          help.map((x, i) => x / (empty[i] as number)),
          "x",
          2,
        ),
      ],
      ["hone --help through tsx (the sources)", spread(tsx, " s", 3)],
      ["set-up before round 0 (optimize() to round 0, as hone optimize reports it)", spread(setup, " s", 3)],
      ["hone optimize, spawn to its first line", spread(firstLine, " s", 3)],
      ["of the set-up: hone.db beside a starting pool, built as until now (WAL, synchronous FULL)", spread(runDb.before, " ms")],
      ["of the set-up: hone.db beside a starting pool, as createRunDb builds it (one flush)", spread(runDb.now, " ms")],
    ],
    [
      { goal: { figure: "hone --help, wall", op: "<=", value: 0.25, unit: " s" }, samples: help },
      { goal: { figure: "set-up before round 0", op: "<=", value: 0.3, unit: " s" }, samples: setup },
    ],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStartup();
