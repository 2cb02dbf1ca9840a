// Cost grows linearly with the work: whole `hone optimize` processes on the offline model (no added latency, so
// the runs are CPU-bound and every ms hone spends shows) served by `hone serve-offline` in its own process, as an
// endpoint is (its CPU is printed apart, not counted as hone's), one rollout at a time (so that CPU time is work,
// not two cores' contention), each dimension at three sizes, 1×, 2× and 4×: rounds, proposals per round,
// evaluations per rollout, and rounds of an archive method (DGM, whose archive grows every round). The work done is
// counted from each run's hone.db (rollouts, evaluations). A run's CPU is the machine's busy time from its start
// until its last process has exited, less the model server's (`peers/tree_rusage.py`): getrusage alone would miss
// the evaluators, whose time the kernel drops when their sandbox's PID namespace ends, so the bench must be the
// only work on the machine. Hone's own process is printed beside; peak memory is its RSS, the largest process.
//
// Linear means the cost of one more unit of work does not grow with the work already done: the marginal CPU per
// unit over the second doubling (2× → 4×) divided by that over the first (1× → 2×). A cost a + b·u gives 1; a
// quadratic term q·u² gives (b + 6q) / (b + 3q), towards 2 as it dominates. Flat memory: the peak RSS at 4× the
// rounds over that at 1× (a longer run must not hold more); a round of more proposals, or a rollout of more
// evaluations, holds more at once by design (its K conversations, a longer one), so their peaks are printed, not
// judged. Longer rollouts make longer conversations, and every model call carries its whole
// conversation (the chat protocol is stateless): the prompt tokens per call are printed beside each dimension, the
// traffic hone serialises, hashes for its records and sends.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import { benchDir, honeCli, median, report, spread } from "./lib.ts";
import { serveOffline } from "./offline-server.ts";
import { processCpu } from "./proc-cpu.ts";

const RUSAGE = join(import.meta.dirname, "peers", "tree_rusage.py");
const REPS = Number(process.env.BENCH_REPS ?? 5);
/** Tolerances: one more unit of work may cost at most 25% more at 4× than at 1×; a 4× longer run's peak at most 25% more. */
const LINEAR = 1.25;
const FLAT = 1.25;

interface Dimension {
  name: string;
  unit: "rollouts" | "evaluations";
  /** The run's flags at 1×, 2× and 4× the work. */
  flags: (scale: number) => string[];
  /** Whether the work grows by the run's length (more rounds), where the peak memory must stay flat. */
  longer?: boolean;
}

const DIMENSIONS: Dimension[] = [
  {
    name: "rounds",
    unit: "rollouts",
    flags: (s) => ["--rounds", String(4 * s), "--proposals", "3", "--max-evals", "5"],
    longer: true,
  },
  {
    name: "proposals per round",
    unit: "rollouts",
    flags: (s) => ["--rounds", "2", "--proposals", String(4 * s), "--max-evals", "5"],
  },
  {
    name: "evaluations per rollout",
    unit: "evaluations",
    flags: (s) => ["--rounds", "2", "--proposals", "2", "--max-evals", String(12 * s)],
  },
  {
    name: "rounds of DGM (a growing archive)",
    unit: "rollouts",
    flags: (s) => ["--method", "dgm", "--rounds", String(4 * s), "--proposals", "3", "--max-evals", "5"],
    longer: true,
  },
];
const SCALES = [1, 2, 4];

interface Measured {
  cpu: number;
  wall: number;
  rssMb: number;
  units: number;
  /** Mean prompt tokens per model call. */
  promptTokens: number;
  /** CPU seconds of the model server while the run went. */
  serverCpu: number;
  /** CPU seconds of hone's own process (getrusage: the evaluators' processes are not in it). */
  honeCpu: number;
}

function runOnce(d: Dimension, scale: number, out: string, seed: number, server: { url: string; pid: number }): Measured {
  const args = [
    honeCli(),
    "optimize",
    "--task",
    "circle-packing",
    ...d.flags(scale),
    "--concurrency",
    "1",
    "--seed",
    String(seed),
  ]
    .concat(["--executor", "offline", "--proposer", "offline", "--cache", "off", "--out", out])
    .concat(["--executor-base-url", server.url, "--proposer-base-url", server.url]);
  const serverBefore = processCpu(server.pid);
  const text = execFileSync("python3", [RUSAGE, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const r = JSON.parse(text.trim().split("\n").pop() ?? "{}") as {
    code: number;
    wall: number;
    cpu: number;
    machine_cpu: number;
    maxrss_mb: number;
  };
  if (r.code !== 0) throw new Error(`hone ${args.slice(1).join(" ")} exited with ${r.code}`);
  const serverCpu = processCpu(server.pid) - serverBefore;
  const db = new Database(join(out, "hone.db"), { readonly: true });
  try {
    const units = (db.prepare(`SELECT COUNT(*) AS n FROM ${d.unit}`).get() as { n: number }).n;
    const calls = db.prepare("SELECT AVG(prompt_tokens) AS p FROM model_calls").get() as { p: number };
    return {
      cpu: r.machine_cpu - serverCpu,
      wall: r.wall,
      rssMb: r.maxrss_mb,
      units,
      promptTokens: calls.p,
      serverCpu,
      honeCpu: r.cpu,
    };
  } finally {
    db.close();
  }
}

/** Marginal CPU per unit between two sizes. */
const marginal = (a: Measured, b: Measured) => (b.cpu - a.cpu) / (b.units - a.units);

/** Runs every dimension at every scale, REPS times: runs[dimension][repetition][scale]. */
async function measureAll(dir: string): Promise<Measured[][][]> {
  const runs = DIMENSIONS.map(() => [] as Measured[][]);
  const server = await serveOffline(0);
  try {
    for (let r = 0; r < REPS; r++)
      DIMENSIONS.forEach((d, i) => {
        runs[i]?.push(SCALES.map((s) => runOnce(d, s, join(dir, `${i}-${r}-${s}`), r, server)));
      });
  } finally {
    server.stop();
  }
  return runs;
}

/** One dimension's rows, its linearity goal, and its memory growth per repetition. */
function dimensionReport(d: Dimension, reps: Measured[][]) {
  const at = (k: number) => reps.map((m) => m[k] as Measured);
  const bySize = (f: (m: Measured) => number, fmt: (x: number) => string) =>
    SCALES.map((_, k) => fmt(median(at(k).map(f)))).join(" / ");
  const seconds = (x: number) => `${x.toFixed(2)} s`;
  const first = reps.map((m) => marginal(m[0] as Measured, m[1] as Measured));
  const second = reps.map((m) => marginal(m[1] as Measured, m[2] as Measured));
  const [perUnit, scale, digits] = d.unit === "rollouts" ? ["s CPU per rollout", 1, 3] : ["ms CPU per evaluation", 1000, 1];
  const rows: [string, string][] = [
    [`${d.name}: ${d.unit} at 1× / 2× / 4×`, bySize((m) => m.units, String)],
    ["  CPU of the run (the machine's, less the model server's), 1× / 2× / 4×", bySize((m) => m.cpu, seconds)],
    ["  of it, hone's own process (the rest: the evaluators'), 1× / 2× / 4×", bySize((m) => m.honeCpu, seconds)],
    ["  the model server's CPU (its own process), 1× / 2× / 4×", bySize((m) => m.serverCpu, seconds)],
    [
      "  prompt tokens per model call, 1× / 2× / 4×",
      bySize(
        (m) => m.promptTokens,
        (x) => x.toFixed(0),
      ),
    ],
    [
      `  ${perUnit}, 1× → 2×`,
      spread(
        first.map((x) => x * scale),
        "",
        digits,
      ),
    ],
    [
      `  ${perUnit}, 2× → 4×`,
      spread(
        second.map((x) => x * scale),
        "",
        digits,
      ),
    ],
    [
      "  peak RSS of its largest process, 1× / 4×",
      `${median(at(0).map((m) => m.rssMb)).toFixed(0)} / ${median(at(2).map((m) => m.rssMb)).toFixed(0)} MB`,
    ],
  ];
  const goal = {
    goal: { figure: `${d.name}: marginal cost, 2× → 4× over 1× → 2×`, op: "<=" as const, value: LINEAR, unit: "" },
    samples: second.map((s, k) => s / (first[k] as number)),
  };
  return { rows, goal, memory: reps.map((m) => (m[2] as Measured).rssMb / (m[0] as Measured).rssMb) };
}

export async function benchScaling(): Promise<boolean> {
  const dir = benchDir("scaling");
  const runs = await measureAll(dir);
  const parts = DIMENSIONS.map((d, i) => dimensionReport(d, runs[i] as Measured[][]));
  // The largest growth of a longer run in each repetition.
  const longer = parts.filter((_, i) => DIMENSIONS[i]?.longer);
  const memory = {
    goal: {
      figure: "peak memory at 4× the rounds over 1× (rounds, DGM's rounds), the larger",
      op: "<=" as const,
      value: FLAT,
      unit: "x",
    },
    samples: Array.from({ length: REPS }, (_, r) => Math.max(...longer.map((p) => p.memory[r] as number))),
  };
  return report(
    `scaling (issue 19): hone optimize, whole processes, one rollout at a time, on the offline model (no latency) served from its own process; each dimension at 1×, 2× and 4×; ${REPS} repetitions`,
    parts.flatMap((p) => p.rows),
    [...parts.map((p) => p.goal), memory],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchScaling();
