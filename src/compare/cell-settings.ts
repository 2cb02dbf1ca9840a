// What one cell × seed of a grid runs: the optimize settings of its search, built from the experiment file, and the
// settings it measures under (`cellSettings`), which a finished or started cell carries so it is never reused under others.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../canonical-json.ts";
import { configError } from "../errors.ts";
import { listFiles } from "../harness/files.ts";
import type { SlurmSettings } from "../loop/distributed/slurm-script.ts";
import type { OptimizeSettings } from "../loop/optimize.ts";
import { optimizeConfigSchema, settingsFromConfig } from "../loop/optimize-config.ts";
import { methodByName } from "../method/registry.ts";
import { withoutPassword } from "../secret-url.ts";
import { resolveTask } from "../task/builtin.ts";
import { taskContentHash } from "../task/content-hash.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { benchmark, dataDir } from "../task/qa/benchmarks.ts";
import { readDataFile } from "../task/qa/readers.ts";
import { qaFixedCalls } from "./budget.ts";
import { MAX_SETTING_DEPTH, nestsAtMost } from "./cell.ts";
import type { Experiment } from "./experiment.ts";
import { type PlannedCell, planCells } from "./plan.ts";
import { roundProposals } from "./search.ts";

export type TaskGroup = Experiment["tasks"][number];
export type MethodEntry = Experiment["methods"][number];

export interface CellSetup {
  group: TaskGroup;
  method: MethodEntry;
  /** The one task the method searches on (the group's train split). */
  train: DiscoveryTask;
  /** What hone measures once at the end (the group's test split; its train split when it has none). */
  test: DiscoveryTask[];
  settings: OptimizeSettings;
}

export interface RunOptions {
  /** Rollouts on BullMQ workers through this Redis URL (hone worker), the search's and the test split's. */
  queue?: string;
  /** A discovery cell's rollouts as sbatch jobs, the search's and the test split's (QA rows cannot use Slurm). */
  slurm?: SlurmSettings;
}

const labelOf = (m: MethodEntry) => m.name ?? m.method;

/**
 * A method's parameters for a cell: as the file gives them, and a method whose own parameters take `proposals`
 * (greedy) gets the cell's K unless the file sets it, so its rounds have the shape the budget was planned for.
 */
function paramsWithK(m: MethodEntry, k: number): Record<string, unknown> {
  if ("proposals" in m.params) return m.params;
  const withK = { ...m.params, proposals: k };
  return methodByName(m.method).params.safeParse(withK).success ? withK : m.params;
}

/** The cell's method and harness entries of the file. */
export function cellEntries(exp: Experiment, cell: PlannedCell) {
  const method = exp.methods.find((m) => labelOf(m) === cell.method) as MethodEntry;
  const harness = exp.harnesses.find((h) => h.name === cell.harness) as Experiment["harnesses"][number];
  return { method, harness };
}

/** What every cell's search shares, as `hone optimize --config` fields: models, method, K, concurrency, seed. */
export function searchConfig(exp: Experiment, cell: PlannedCell) {
  const { method, harness } = cellEntries(exp, cell);
  const k = method.proposals ?? exp.search.proposals;
  return {
    seed_harness: harness.path,
    executor: exp.executor,
    proposer: exp.proposer,
    rounds: 1,
    proposals: k,
    method: method.method,
    method_params: paramsWithK(method, k),
    concurrency: exp.search.concurrency,
    noise_repeats: exp.search.noise_repeats,
    seed: cell.seed,
  };
}

/** Resolves a discovery cell's group, method, tasks and search settings; what cannot run is an error naming the field. */
export async function cellSetup(exp: Experiment, cell: PlannedCell, o: RunOptions = {}): Promise<CellSetup> {
  const gi = exp.tasks.findIndex((t) => t.name === cell.benchmark);
  const group = exp.tasks[gi] as TaskGroup;
  const { method } = cellEntries(exp, cell);
  const trainRef = group.splits.train[0] as string;
  const train = await resolveTask(trainRef, group.tasks_dir);
  const test = await Promise.all((group.splits.test ?? group.splits.train).map((r) => resolveTask(r, group.tasks_dir)));
  for (const [j, t] of test.entries())
    if (t.metric !== train.metric || t.direction !== train.direction)
      throw configError(
        exp.file,
        `tasks.${gi}.splits.test.${j}`,
        `${t.id} scores ${t.metric} (${t.direction}) but ${train.id} scores ${train.metric} (${train.direction}); a group's tasks share one metric and direction`,
      );
  const config = optimizeConfigSchema.parse({
    ...searchConfig(exp, cell),
    task: trainRef,
    tasks_dir: group.tasks_dir,
    max_evals: exp.search.max_evals,
    paired: exp.search.paired,
  });
  const settings = settingsFromConfig(config, train.budget.maxEvals);
  if (o.queue) settings.queue = o.queue;
  if (o.slurm) settings.slurm = o.slurm;
  return { group, method, train, test, settings };
}

/**
 * What this build cannot run, checked before anything is written: discovery groups that are not one task to search on,
 * QA rows whose train and validation limits alone take more evaluator calls than the budget (a row without limits
 * is checked against its splits' sizes when its cell starts: qa-cell.ts), and QA rows asked to run on Slurm.
 */
export function runnableProblems(exp: Experiment, o: RunOptions = {}): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  if (o.slurm && exp.benchmarks.length > 0)
    out.push({
      field: "benchmarks",
      message:
        "--runner slurm runs discovery tasks' rollouts as sbatch jobs; a QA row's questions run locally or on BullMQ workers (--queue): run the benchmarks in a file of their own",
    });
  exp.benchmarks.forEach((b, i) => {
    const train = b.splits.train.limit;
    const validation = b.splits.validation?.limit;
    if (exp.budget.unit !== "evaluator_calls" || train === undefined || validation === undefined) return;
    const fixed = qaFixedCalls(train, validation);
    if (exp.budget.size < fixed)
      out.push({
        field: "budget.size",
        message: `benchmarks.${i} (${b.benchmark}): the seed harness on ${train} train questions and the final choice on ${validation} validation questions take ${fixed} evaluator calls, more than the budget's ${exp.budget.size}; raise budget.size or lower the limits`,
      });
  });
  out.push(...paramProblems(exp));
  exp.tasks.forEach((t, i) => {
    if (t.splits.train.length !== 1)
      out.push({
        field: `tasks.${i}.splits.train`,
        message: `optimize searches on one discovery task; give one train task (the test split may hold several)`,
      });
    if (t.splits.validation)
      out.push({
        field: `tasks.${i}.splits.validation`,
        message: "a discovery group has no validation split here: the method sees its train task's rollouts only",
      });
  });
  return out;
}

/** A built-in method's params its own schema refuses: found before any cell starts, naming the field. */
function paramProblems(exp: Experiment): { field: string; message: string }[] {
  return (exp.methods ?? []).flatMap((m, i) => {
    if (m.method.includes("/")) return []; // a method given as a program reads its params itself
    const r = methodByName(m.method).params.safeParse(paramsWithK(m, m.proposals ?? exp.search.proposals));
    if (r.success) return [];
    const issues = r.error.issues.map((x) => `${x.path.join(".") || "(top)"}: ${x.message}`).join("; ");
    return [{ field: `methods.${i}.params`, message: `bad parameters for ${m.method}: ${issues}` }];
  });
}

/**
 * Cells whose budget of evaluator calls cannot buy one round of proposals (K rollouts of max_evals calls, or for a QA
 * row the seed on train, the choice on validation and K candidates on train): such a search has nothing to run.
 * Found before anything is written, naming `budget.size`; a QA row by its slices as loaded (`qaSlices`).
 */
export async function budgetProblems(
  exp: Experiment,
  qaSlices: (cell: PlannedCell) => Promise<{ train: number; validation: number }>,
): Promise<{ field: string; message: string }[]> {
  if (exp.budget.unit !== "evaluator_calls") return [];
  const size = exp.budget.size;
  const out: { field: string; message: string }[] = [];
  const seen = new Set<string>();
  for (const cell of planCells(exp)) {
    if (seen.has(cell.cell)) continue;
    seen.add(cell.cell);
    const { method } = cellEntries(exp, cell);
    const k = method.proposals ?? exp.search.proposals;
    const perRound = (s: Pick<OptimizeSettings, "method" | "methodParams" | "proposals">) =>
      method.method.includes("/") ? k : roundProposals(s);
    const qi = exp.benchmarks.findIndex((b) => (b.name ?? b.benchmark) === cell.benchmark);
    if (qi >= 0) {
      // The slices as loaded (a limit only caps one: the file may hold fewer).
      const { train, validation } = await qaSlices(cell);
      const kq = perRound({ method: method.method, methodParams: paramsWithK(method, k), proposals: k });
      const need = qaFixedCalls(train, validation) + kq * train;
      if (size >= qaFixedCalls(train, validation) && size < need)
        out.push({
          field: "budget.size",
          message: `${cell.cell}: the seed harness on ${train} train questions, the final choice on ${validation} validation questions and one round of ${kq} candidates on the train questions take ${need} evaluator calls, more than the budget's ${size}; raise budget.size, or lower the limits or proposals`,
        });
      continue;
    }
    const { settings } = await cellSetup(exp, cell);
    const kd = perRound(settings);
    const need = kd * (settings.paired ? 2 : 1) * settings.maxEvals;
    if (size < need)
      out.push({
        field: "budget.size",
        message: `${cell.cell}: one round of ${kd} proposals takes at least ${need} evaluator calls (${kd}${settings.paired ? " × 2 paired" : ""} rollouts × max_evals ${settings.maxEvals}), more than the budget's ${size}; raise budget.size, or lower search.max_evals or search.proposals`,
      });
  }
  return out;
}

/**
 * Everything that decides what a cell × seed measures, one entry per setting under the experiment file's field names:
 * the seed, the seed harness's files, the method (a method given as a folder: its files) and its resolved params,
 * the shape of its rounds, the models, the budget, the repeats, and the tasks (each task's id and content hash) or
 * the QA row (its benchmark, its data files, split_seed and limits). Not what only decides where or how fast it runs
 * (`search.concurrency`, `--cells`, `--queue`, `--runner`), nor a folder's path (its content counts). Values are
 * plain JSON; two settings are the same when their canonical JSON is.
 */
export type CellSettings = Record<string, unknown>;

/** The entries the seed harness's shared test measurement at a seed depends on (the other entries are the search's). */
export const SEED_MEASUREMENT_KEYS = [
  "seed",
  "harnesses.path",
  "executor",
  "search.max_evals",
  "tasks.splits.test",
  "benchmarks.benchmark",
  "benchmarks.data_dir",
  "benchmarks.splits.test",
] as const;

/** Digests computed once per invocation: a task folder, a harness or method folder, a benchmark's data files. */
export type DigestMemo = Map<string, Promise<string>>;

const DIGEST_BYTES = 64 << 20;
const short = (h: { digest: (e: "hex") => string }) => h.digest("hex").slice(0, 32);

/** Python's byte-code caches: written by running the program, never what it is (as content-hash.ts skips them). */
const BYTECODE = /(^|\/)__pycache__\/|\.py[co]$/;

/** A folder's files (path and bytes; past 64 MiB, size and time): a harness or a method given as a program. */
function folderDigest(root: string): string {
  const h = createHash("sha256");
  let left = DIGEST_BYTES;
  for (const f of existsSync(root) ? listFiles(root).filter((f) => !BYTECODE.test(f)) : []) {
    const size = statSync(join(root, f)).size;
    h.update(`${f}\0`);
    if (size <= left) h.update(readFileSync(join(root, f)));
    else h.update(`size ${size} modified ${statSync(join(root, f)).mtimeMs}`);
    left -= Math.min(size, left);
    h.update("\0");
  }
  return short(h);
}

/**
 * A QA benchmark's data files (their bytes), as the row reads them (regular files only: a FIFO is refused, naming it,
 * never waited on); a missing file counts as missing.
 */
function dataDigest(id: string, dir: string | undefined): string {
  const b = benchmark(id);
  const root = join(dir ?? dataDir(), b.id);
  const h = createHash("sha256");
  for (const f of b.files) {
    const file = join(root, f.name);
    h.update(`${f.name}\0`).update(existsSync(file) ? createHash("sha256").update(readDataFile(file)).digest("hex") : "missing");
  }
  return short(h);
}

function memoized(memo: DigestMemo, key: string, make: () => Promise<string> | string): Promise<string> {
  let p = memo.get(key);
  if (!p) {
    p = Promise.resolve().then(make);
    memo.set(key, p);
  }
  return p;
}

const taskDigest = (memo: DigestMemo, ref: string, dir: string | undefined) =>
  memoized(memo, `task\0${dir ?? ""}\0${ref}`, async () => {
    const t = await resolveTask(ref, dir);
    return `${t.id} content ${taskContentHash(t)}`;
  });

/**
 * A model as far as it decides what is measured: not its key's variable, timeouts or streaming; its URL as hone writes
 * one (credentials taken out: the settings are written beside each cell and printed when they differ).
 */
const modelPart = (m: Experiment["executor"]) => ({
  model: m.model,
  base_url: m.base_url === undefined ? undefined : withoutPassword(m.base_url),
  dialect: m.dialect,
  keep_sampling: m.keep_sampling,
});

/** What a cell × seed measures under (CellSettings), from the experiment file and the files it names. */
export async function cellSettings(exp: Experiment, cell: PlannedCell, memo: DigestMemo = new Map()): Promise<CellSettings> {
  const { method, harness } = cellEntries(exp, cell);
  const search = searchConfig(exp, cell);
  const isFolder = method.method.includes("/");
  const common: CellSettings = {
    seed: cell.seed,
    "harnesses.path": `content ${await memoized(memo, `dir\0${harness.path}`, () => folderDigest(harness.path))}`,
    "methods.method": isFolder
      ? `program content ${await memoized(memo, `dir\0${method.method}`, () => folderDigest(method.method))}`
      : method.method,
    "search.proposals": search.proposals,
    // A file's params nested past what a record keeps are kept by their digest (each key's values compare the same).
    "methods.params": nestsAtMost(search.method_params, MAX_SETTING_DEPTH - 1)
      ? search.method_params
      : `digest ${createHash("sha256").update(canonicalJson(search.method_params)).digest("hex")}`,
    "search.max_evals": exp.search.max_evals ?? null,
    "search.noise_repeats": exp.search.noise_repeats,
    "search.paired": exp.search.paired,
    executor: modelPart(exp.executor),
    proposer: modelPart(exp.proposer),
    budget: { unit: exp.budget.unit, size: exp.budget.size },
    repeats: exp.repeats,
  };
  const qa = exp.benchmarks.find((b) => (b.name ?? b.benchmark) === cell.benchmark);
  if (qa)
    return JSON.parse(
      JSON.stringify({
        ...common,
        "search.max_evals": null, // a QA question is answered once: max_evals does not apply
        "search.paired": null,
        "benchmarks.benchmark": qa.benchmark,
        "benchmarks.data_dir": `content ${await memoized(memo, `data\0${qa.data_dir ?? ""}\0${qa.benchmark}`, () =>
          dataDigest(qa.benchmark, qa.data_dir),
        )}`,
        "benchmarks.split_seed": qa.split_seed,
        "benchmarks.splits.search": { train: qa.splits.train.limit ?? null, validation: qa.splits.validation?.limit ?? null },
        "benchmarks.splits.test": qa.splits.test.limit ?? null,
      }),
    );
  const group = exp.tasks.find((t) => t.name === cell.benchmark) as TaskGroup;
  const digests = (refs: readonly string[]) => Promise.all(refs.map((r) => taskDigest(memo, r, group.tasks_dir)));
  return JSON.parse(
    JSON.stringify({
      ...common,
      "tasks.splits.train": await digests(group.splits.train),
      "tasks.splits.test": await digests(group.splits.test ?? group.splits.train),
    }),
  );
}

/** The entries whose values differ between what a cell was made with and what the file asks for now, in `want`'s order. */
export function changedSettings(have: CellSettings, want: CellSettings): string[] {
  const keys = [...new Set([...Object.keys(want), ...Object.keys(have)])];
  return keys.filter((k) => canonicalJson(have[k] ?? null) !== canonicalJson(want[k] ?? null));
}

/** The entries of a cell's settings its seed harness's shared test measurement depends on. */
export function seedMeasurementSettings(s: CellSettings): CellSettings {
  return Object.fromEntries(SEED_MEASUREMENT_KEYS.filter((k) => k in s).map((k) => [k, s[k]]));
}
