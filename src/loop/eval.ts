import { join, resolve } from "node:path";
import { HoneError } from "../errors.ts";
import { loadHarness } from "../harness/package.ts";
import type { Harness } from "../harness/types.ts";
import { HONE_VERSION } from "../measure/identity.ts";
import type { CacheMode } from "../model/cache.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { insertCandidate } from "../store/candidates.ts";
import { createRunDb, type Db, finishRun, openDb } from "../store/db.ts";
import { type LoadableSplit, loadSplit, type QATask } from "../task/qa/benchmarks.ts";
import { meanOver, passAtK, passHatK } from "../task/qa/code/pass-at-k.ts";
import { officialScorer, primaryMetric } from "../task/qa/score-answer.ts";
import { measurePanel, panelHash } from "./qa-measure.ts";
import { LocalQARunner, type QARunner } from "./qa-runner.ts";
import type { TaskResult } from "./qa-task.ts";
import { Recording } from "./recording.ts";
import { snapshotHarness } from "./run-dir.ts";
import { takeRunDir } from "./run-writer.ts";

export { questionMessage, solveTask, type TaskResult } from "./qa-task.ts";

export interface EvalSummary {
  benchmark: string;
  split: string;
  harness: { name: string; content_hash: string };
  tasks: number;
  completed: number;
  failed: number;
  /** The benchmark's primary 0/1 metric, behind `accuracy` and its interval. */
  metric: string;
  /** Each official metric's mean over the completed tasks, by its published name. */
  metrics: Record<string, number>;
  accuracy: number;
  ci95: [number, number];
  meanScore: number;
  /** Samples per task (`--samples`); with more than one, every sample is a row of `results`. */
  samples: number;
  /** pass@k from the samples (the unbiased estimator), k = 1, 10, 100 up to the number of samples. */
  passAtK: Record<string, number>;
  /** τ-bench's pass^k from the samples (trials), k = 1 … the number of samples. */
  passHatK: Record<string, number>;
  results: TaskResult[];
  /** The questions measured (ids, questions and golds, in order) as one sha256: `panelHash`. */
  panel_sha256: string;
  /** The hone version that measured them. */
  hone: string;
  /** The run directory: hone.db, harness/, trajectories/, summary.json. */
  outDir: string;
}

/** Per task, how many samples completed and how many of those were correct (results in task-major order). */
function counts(results: TaskResult[], n: number): { n: number; c: number }[] {
  const out: { n: number; c: number }[] = [];
  for (let i = 0; i < results.length; i += n) {
    const done = results.slice(i, i + n).filter((r) => r.status === "completed");
    if (done.length) out.push({ n: done.length, c: done.filter((r) => r.correct).length });
  }
  return out;
}

function estimates(results: TaskResult[], n: number): Pick<EvalSummary, "passAtK" | "passHatK"> {
  const per = counts(results, n);
  const most = Math.min(n, ...per.map((t) => t.n));
  const ks = (list: number[]) => list.filter((k) => per.length > 0 && k <= most);
  return {
    passAtK: Object.fromEntries(ks([1, 10, 100]).map((k) => [`pass@${k}`, meanOver(per, k, passAtK)])),
    passHatK: Object.fromEntries(
      ks(Array.from({ length: n }, (_, i) => i + 1)).map((k) => [`pass^${k}`, meanOver(per, k, passHatK)]),
    ),
  };
}

/**
 * The 95% interval of the accuracy, over questions: with several samples per question they are not independent
 * trials (a question the harness always solves is solved in every sample), so each question counts once, with its
 * share of correct samples. This is Wilson's interval with the number of questions as n; it is never narrower than
 * the questions alone support (the share of a question varies no more than one 0/1 answer does).
 */
function accuracyInterval(results: TaskResult[], n: number): [number, number] {
  const per = counts(results, n);
  return wilson(
    per.reduce((a, t) => a + t.c / t.n, 0),
    per.length,
  );
}

/** The standard normal's 97.5% quantile (scipy.stats.norm.ppf(0.975)), not 1.96 rounded. */
const Z_975 = 1.959963984540054;

/** Wilson score interval for a proportion (95%), as statsmodels' proportion_confint(method="wilson") gives it. */
export function wilson(successes: number, n: number, z = Z_975): [number, number] {
  if (n === 0) return [0, 0];
  const p = successes / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

export interface EvalOptions extends Partial<ModelSettings> {
  harnessDir: string;
  benchmark: string;
  /** `test-heldout`: a test-only benchmark's test file without its search pool (what hone compare measures). */
  split: LoadableSplit;
  limit?: number;
  dataDir?: string;
  concurrency?: number;
  seed?: number;
  /** The run directory (default runs/eval-<benchmark>-<split>-<time>); it must not exist or be empty. */
  outDir?: string;
  /** Request cache: off (default for eval), read-write, or replay. */
  cache?: { mode: CacheMode; dir?: string };
  /** For `hone replay`: the recorded eval run whose model calls this one reproduces. */
  replayOf?: string;
  /** Samples per task (default 1), for pass@k and pass^k; each at its own sampling seed. */
  samples?: number;
  /** The simulated user of conversation benchmarks (τ-bench): `--user-model`; the executor's model when unset. */
  userModel?: ModelSettings;
  onResult?: (r: TaskResult, done: number, total: number) => void;
  /** Called with a plain note a user should see (its folder written without its lock, where locks do not work). */
  onNotice?: (text: string) => void;
  /** Called once the run's folder is held, with what removes everything the eval wrote there (`hone replay` on a stop). */
  onHeld?: (dir: string, abandon: () => void) => void;
}

/** What an eval run stores to be replayed: its options without callbacks, paths absolute. */
export type EvalConfig = Omit<EvalOptions, "onResult" | "onNotice" | "onHeld">;

/**
 * `hone eval`: a harness on a benchmark split, each task scored by the benchmark's official rule. Tasks run through a
 * runner (the local pool unless one is given, e.g. BullMQ workers); the summary does not depend on which. The run
 * directory holds hone.db (the measurement, every task's result, model calls and responses), a copy of the harness,
 * the trajectories and summary.json.
 */
export async function evaluateBenchmark(o: EvalOptions, runner?: QARunner): Promise<EvalSummary> {
  checkCounts(o);
  const harness = loadHarness(o.harnessDir);
  const tasks = await loadSplit(o.benchmark, o.split, { dir: o.dataDir, seed: o.seed, limit: o.limit });
  // Held until the measurement ends: a second eval into the same folder is refused, one without --out goes elsewhere.
  const held = takeRunDir({
    dir: o.outDir,
    prefix: `eval-${o.benchmark}-${o.split}`,
    resume: false,
    onNotice: o.onNotice,
    hint: "choose another --out",
  });
  let db: Db;
  try {
    o.onHeld?.(held.dir, held.abandon);
    db = beginEval(held.dir, o, harness.dir);
  } catch (err) {
    held.abandon(); // an eval that could not begin (its harness copy or hone.db not written: a full disk) leaves no folder
    throw err;
  }
  try {
    return await measureInto(held.dir, db, o, harness, tasks, runner);
  } finally {
    held.lock.release();
  }
}

/**
 * The whole-number options, refused by name when they are not one in range: a limit of 0, -1 or "abc" would
 * otherwise measure another panel than the one asked for (the whole split, all but its last task), and samples of
 * "abc" none at all, reported as a finished eval.
 */
function checkCounts(o: EvalOptions): void {
  const counts: [string, string, unknown, number][] = [
    ["limit", "--limit", o.limit, 1],
    ["concurrency", "--concurrency", o.concurrency, 1],
    ["samples", "--samples", o.samples, 1],
    ["seed", "--seed", o.seed, 0],
  ];
  for (const [name, flag, value, min] of counts)
    if (value != null && !(typeof value === "number" && Number.isSafeInteger(value) && value >= min))
      throw new HoneError(
        "usage",
        `${name} (${flag}) takes a whole number of at least ${min}; got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`,
      );
}

/** The eval's folder begun (held): a copy of the harness measured (`harnessDir`, resolved), and hone.db, open. */
function beginEval(outDir: string, o: EvalOptions, harnessDir: string): Db {
  snapshotHarness(harnessDir, join(outDir, "harness"));
  const { onResult: _cb, onNotice: _n, onHeld: _h, ...config } = o;
  createRunDb(join(outDir, "hone.db"), "eval", {
    ...config,
    harnessDir,
    dataDir: o.dataDir ? resolve(o.dataDir) : undefined,
    outDir,
  } satisfies EvalConfig);
  return openDb(join(outDir, "hone.db"), { replay: o.replayOf !== undefined });
}

/** The measurement itself, into `outDir` (held, begun): the trajectories, the results in `db`, summary.json. */
async function measureInto(
  outDir: string,
  db: Db,
  o: EvalOptions,
  harness: Harness,
  tasks: QATask[],
  runner?: QARunner,
): Promise<EvalSummary> {
  const recording = new Recording(outDir, { cache: o.cache ?? { mode: "off" }, replayOf: o.replayOf });
  // With --samples n each task is measured n times, each sample its own panel row and seed.
  const n = Math.max(1, o.samples ?? 1);
  const panel: QATask[] = tasks.flatMap((task) =>
    Array.from({ length: n }, (_, k) => (k ? { ...task, id: `${task.id}.sample${k}` } : task)),
  );
  const seedOf = (j: number) => (o.seed ?? 0) + Math.floor(j / n) + (j % n) * 1_000_003;
  const pool =
    runner ??
    new LocalQARunner({
      model: { ...o, model: o.model ?? "offline" } as ModelSettings,
      concurrency: o.concurrency ?? 8,
      recording,
      userModel: o.userModel,
    });
  insertCandidate(db, "run", {
    id: "harness",
    round: 0,
    slot: 0,
    parentCommit: "",
    commit: null,
    ref: null,
    contentHash: harness.contentHash,
    spec: null,
    changed: [],
    status: "seed",
    gateError: null,
    repaired: false,
  });
  const results: TaskResult[] = new Array(panel.length);
  let done = 0;
  try {
    await measurePanel(
      db,
      outDir,
      "run",
      {
        id: "harness",
        round: 0,
        candidateId: "harness",
        commit: null,
        contentHash: harness.contentHash,
        benchmark: o.benchmark,
        split: o.split,
        tasks: panel.length,
        panel,
        harnessDir: join(outDir, "harness"),
        seedOf,
        trajectoryDir: "trajectories",
      },
      pool,
      recording,
      (row, result) => {
        if (!result) return;
        results[row.idx] = result;
        o.onResult?.(result, ++done, panel.length);
      },
    );
    const completed = results.filter((r) => r.status === "completed");
    const correct = completed.filter((r) => r.correct).length;
    const scorer = officialScorer(o.benchmark);
    const mean = (name: string) =>
      completed.length ? completed.reduce((a, r) => a + (r.metrics?.[name] ?? 0), 0) / completed.length : 0;
    const summary: EvalSummary = {
      benchmark: o.benchmark,
      split: o.split,
      harness: { name: harness.name, content_hash: harness.contentHash },
      tasks: tasks.length,
      completed: completed.length,
      failed: panel.length - completed.length,
      metric: primaryMetric(scorer),
      metrics: Object.fromEntries(scorer.metrics.map((m) => [m, mean(m)])),
      accuracy: completed.length ? correct / completed.length : 0,
      ci95: accuracyInterval(results, n),
      meanScore: completed.length ? completed.reduce((a, r) => a + r.score, 0) / completed.length : 0,
      samples: n,
      ...estimates(results, n),
      panel_sha256: panelHash(tasks),
      hone: HONE_VERSION,
      results,
      outDir,
    };
    writeJsonAtomic(join(outDir, "summary.json"), summary);
    const { results: _r, ...brief } = summary;
    finishRun(db, brief);
    return summary;
  } finally {
    if (!runner) await pool.close();
    recording.close();
    db.close();
  }
}
