// One cell × seed of a grid, start to finish: the method's search (an ordinary optimize run in the cell's folder), then
// hone's measurement of the method's final choice and of the seed harness on the test split, then cell.json. A cell
// whose cell.json is there is finished and never run again; every step before it resumes from what it left.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { OptimizeEvent, OptimizeSettings } from "../loop/optimize.ts";
import { HONE_VERSION } from "../measure/identity.ts";
import { withoutPassword } from "../secret-url.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { taskContentHash } from "../task/content-hash.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { type EvaluatorRuntime, evaluatorRuntime, sandboxed } from "../task/evaluator-runtime.ts";
import type { CellIdentity, CellRecord, ChoiceResult, MethodClaim } from "./cell.ts";
import { cellSetup, type RunOptions } from "./cell-settings.ts";
import type { Experiment } from "./experiment.ts";
import { measureQAOnTest } from "./measure-qa.ts";
import { measureOnTest } from "./measure-test.ts";
import { type PlannedCell, seedDir } from "./plan.ts";
import { qaCellSetup, qaScorer, qaTaskSet } from "./qa-cell.ts";
import { CELL_FILE } from "./read-cells.ts";
import { runSearch } from "./search.ts";

export interface CellRunOptions extends RunOptions {
  /** The experiment's out folder. */
  out: string;
  onEvent?: (cell: PlannedCell, e: OptimizeEvent) => void;
  /** The settings the cell × seed was started under (cellSettings), carried into its cell.json; unknown if absent. */
  settings?: Record<string, unknown>;
}

/** The cell's record if it is finished (its cell.json is written last, atomically). */
export const isFinished = (out: string, cell: PlannedCell) => existsSync(join(out, cell.dir, CELL_FILE));

const endpointOf = (m: OptimizeSettings["executor"]) => ({
  endpoint: m.model === "offline" ? "offline" : withoutPassword(m.baseUrl ?? ""),
  model: m.model,
  dialect: m.dialect ?? "vllm",
});

/**
 * The test tasks' evaluator versions as one: each version the tasks' Pythons report, joined where they differ, and
 * "none" for the sandbox where any task is evaluated without one; undefined where a task's Python cannot be asked.
 */
export async function testEvaluator(tasks: readonly DiscoveryTask[]): Promise<EvaluatorRuntime | undefined> {
  const all = await Promise.all(tasks.map((t) => evaluatorRuntime(t).then((r) => sandboxed(r, t))));
  const known = all.filter((r): r is EvaluatorRuntime => r !== undefined);
  if (known.length === 0 || known.length < all.length) return undefined;
  const joined = (f: (r: EvaluatorRuntime) => string) => [...new Set(known.map(f))].join(" / ");
  const sandboxes = new Set(known.map((r) => r.sandbox));
  return {
    python: joined((r) => r.python),
    numpy: known.every((r) => r.numpy === null) ? null : joined((r) => r.numpy ?? "none"),
    ...(sandboxes.has(undefined) ? {} : { sandbox: sandboxes.has("none") ? "none" : "bubblewrap" }),
  };
}

/**
 * The test split's task set as one component: its ids, one hash over every task's folder (evaluator included), and
 * the evaluator's versions (a report names cells measured under different ones; they are compared all the same).
 */
function taskSet(tasks: readonly DiscoveryTask[], group: string, evaluator: EvaluatorRuntime | undefined) {
  const hashes = tasks.map((t) => `${t.id}:${taskContentHash(t)}`).join("\n");
  const content = createHash("sha256").update(hashes).digest("hex").slice(0, 32);
  const first = tasks[0] as DiscoveryTask;
  const id = `${group}/test[${tasks.map((t) => t.id).join(",")}]`;
  return { id, content, metric: first.metric, direction: first.direction, ...(evaluator ? { evaluator } : {}) };
}

function identityOf(
  exp: Experiment,
  s: OptimizeSettings,
  test: readonly DiscoveryTask[],
  group: string,
  seedHash: string,
  evaluator: EvaluatorRuntime | undefined,
) {
  const set = taskSet(test, group, evaluator);
  const first = test[0] as DiscoveryTask;
  const id: CellIdentity = {
    measurement: {
      task: set,
      executor: endpointOf(s.executor),
      // A harness's sampling is its own (covered by its content hash); the grid sets none of its own.
      sampling: {},
      budget: { maxEvals: s.maxEvals, timeoutSec: first.timeoutSec },
      harness: seedHash,
      hone: HONE_VERSION,
    },
    proposer: endpointOf(s.proposer),
    split: "test",
    scorer: `evaluator.py of each task (task set content ${set.content})`,
    repeats: exp.repeats,
    budget: { unit: exp.budget.unit, size: exp.budget.size },
  };
  return id;
}

/** Where the seed harness's test measurements go: hidden, so the report does not take it for a cell. */
export const SEED_FOLDER = ".seed-harness";

// Cells running at once that share a seed measurement wait for the one making it.
const making = new Map<string, Promise<ChoiceResult>>();
function once(key: string, make: () => Promise<ChoiceResult>): Promise<ChoiceResult> {
  let p = making.get(key);
  if (!p) {
    p = make().finally(() => making.delete(key));
    making.set(key, p);
  }
  return p;
}

/** The seed harness's candidate id in an optimize run. */
const SEED_CANDIDATE = "r00-seed";

/** What optimize left in `<run>/best/meta.json`: the final candidate and the scores its search measured. */
interface BestMeta {
  candidate?: string;
  score?: number | null;
  train_score?: number | null;
  validation_score?: number | null;
}
const bestMeta = (runDir: string) => JSON.parse(readFileSync(join(runDir, "best", "meta.json"), "utf8")) as BestMeta;

/**
 * What the method's search claims for its own final choice (its train score; a QA search also its validation score),
 * kept beside hone's test measurement as the method's, at the spend the search ended with.
 */
export function methodClaims(meta: BestMeta, x: number): MethodClaim[] {
  const candidate = meta.candidate ?? SEED_CANDIDATE;
  const train = meta.train_score ?? meta.score;
  const out: MethodClaim[] = [];
  if (typeof train === "number" && Number.isFinite(train))
    out.push({ x, score: train, split: "train", candidate, note: "the search's own score of its final choice on train" });
  if (typeof meta.validation_score === "number" && Number.isFinite(meta.validation_score))
    out.push({
      x,
      score: meta.validation_score,
      split: "validation",
      candidate,
      note: "the search's own score of its final choice on validation",
    });
  return out;
}

/** A cell's record without what every cell adds alike. */
type CellPart = Pick<CellRecord, "identity" | "final" | "seed_harness" | "curve" | "cost" | "method_reported">;

const seedFolder = (o: CellRunOptions, cell: PlannedCell) =>
  join(o.out, SEED_FOLDER, `${cell.benchmark}+${cell.harness}`, seedDir(cell.seed));
const harnessPath = (exp: Experiment, cell: PlannedCell) => exp.harnesses.find((h) => h.name === cell.harness)?.path as string;

/**
 * The seed harness at this seed is one measurement shared by every method's cell (the same harness, tasks and seeds);
 * a method that kept the seed harness chose what was measured: the same candidate, the same seeds.
 */
async function measureBoth(
  cell: PlannedCell,
  o: CellRunOptions,
  dir: string,
  measure: (harness: string, candidate: string, at: string) => Promise<ChoiceResult>,
  harness: string,
): Promise<{ final: ChoiceResult; seed_harness: ChoiceResult }> {
  const shared = seedFolder(o, cell);
  const seedHarness = await once(shared, () => measure(harness, "seed", shared));
  const chosen = bestMeta(dir).candidate ?? SEED_CANDIDATE;
  const final =
    chosen === SEED_CANDIDATE
      ? { ...seedHarness, candidate: chosen }
      : await measure(join(dir, "best"), chosen, join(dir, "test", "final"));
  return { final, seed_harness: seedHarness };
}

async function discoveryCell(exp: Experiment, cell: PlannedCell, o: CellRunOptions, dir: string): Promise<CellPart> {
  const setup = await cellSetup(exp, cell, o);
  const { spend } = await runSearch({
    dir,
    settings: setup.settings,
    budget: exp.budget,
    direction: setup.train.direction,
    onEvent: o.onEvent && ((e) => o.onEvent?.(cell, e)),
  });
  const s = setup.settings;
  const run = { ...s.executor, maxEvals: s.maxEvals, tasksDir: s.tasksDir, warmPool: s.warmPool, queue: s.queue, slurm: s.slurm };
  const common = { tasks: setup.test, repeats: exp.repeats, seed: cell.seed, run };
  const both = await measureBoth(
    cell,
    o,
    dir,
    (harness, candidate, at) => measureOnTest({ ...common, harness, candidate, dir: at }),
    harnessPath(exp, cell),
  );
  return {
    identity: identityOf(exp, s, setup.test, setup.group.name, both.seed_harness.harness, await testEvaluator(setup.test)),
    ...both,
    curve: { split: "train", points: spend.curve },
    method_reported: methodClaims(bestMeta(dir), spend.cost[exp.budget.unit]),
    cost: spend.cost,
  };
}

async function qaCell(exp: Experiment, cell: PlannedCell, o: CellRunOptions, dir: string): Promise<CellPart> {
  const setup = await qaCellSetup(exp, cell, o);
  const s = setup.settings;
  const { spend } = await runSearch({
    dir,
    settings: s,
    budget: exp.budget,
    direction: "maximize",
    qa: setup.slices,
    onEvent: o.onEvent && ((e) => o.onEvent?.(cell, e)),
  });
  const { entry } = setup;
  const common = {
    benchmark: entry.benchmark,
    split: setup.testSplit,
    limit: entry.splits.test.limit,
    dataDir: entry.data_dir,
    repeats: exp.repeats,
    seed: cell.seed,
    executor: s.executor,
    concurrency: s.concurrency,
    queue: o.queue,
  };
  const both = await measureBoth(
    cell,
    o,
    dir,
    (harness, candidate, at) => measureQAOnTest({ ...common, harness, candidate, dir: at }),
    harnessPath(exp, cell),
  );
  const identity: CellIdentity = {
    measurement: {
      task: qaTaskSet(setup),
      executor: endpointOf(s.executor),
      sampling: {},
      // Each question is answered once per repeat, within the harness's own limits.
      budget: { maxEvals: 1, timeoutSec: s.timeLimitSec ?? 0 },
      harness: both.seed_harness.harness,
      hone: HONE_VERSION,
    },
    proposer: endpointOf(s.proposer),
    split: setup.testSplit,
    scorer: qaScorer(entry.benchmark),
    repeats: exp.repeats,
    budget: { unit: exp.budget.unit, size: exp.budget.size },
  };
  return {
    identity,
    ...both,
    curve: { split: "train", points: spend.curve },
    method_reported: methodClaims(bestMeta(dir), spend.cost[exp.budget.unit]),
    cost: spend.cost,
  };
}

const isQARow = (exp: Experiment, cell: PlannedCell) => exp.benchmarks.some((b) => (b.name ?? b.benchmark) === cell.benchmark);

/** Runs (or resumes) one cell × seed and writes its cell.json; returns the record. */
export async function runCell(exp: Experiment, cell: PlannedCell, o: CellRunOptions): Promise<CellRecord> {
  const dir = join(o.out, cell.dir);
  const part = isQARow(exp, cell) ? await qaCell(exp, cell, o, dir) : await discoveryCell(exp, cell, o, dir);
  const record: CellRecord = {
    format: "hone-cell/1",
    benchmark: cell.benchmark,
    harness: cell.harness,
    method: cell.method,
    seed: cell.seed,
    identity: part.identity,
    settings: o.settings,
    test_seen_by_method: cell.test_seen_by_method,
    final: part.final,
    seed_harness: part.seed_harness,
    curve: part.curve,
    method_reported: part.method_reported,
    cost: part.cost,
    finished: new Date().toISOString(),
  };
  writeJsonAtomic(join(dir, CELL_FILE), record);
  return record;
}
