// A QA row's cell × seed: its search settings (hone optimize --benchmark on the row's train and validation slices),
// the split hone measures at the end, and its measurement identity (the benchmark, its data files' content hash, the
// official scorer, the questions measured).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configError } from "../errors.ts";
import type { OptimizeSettings } from "../loop/optimize.ts";
import { optimizeConfigSchema, settingsFromConfig } from "../loop/optimize-config.ts";
import { benchmark, dataDir, isTestOnly, type LoadableSplit, loadSplit, type QATask } from "../task/qa/benchmarks.ts";
import { qaFixedCalls } from "./budget.ts";
import { type RunOptions, searchConfig } from "./cell-settings.ts";
import type { Experiment } from "./experiment.ts";
import type { PlannedCell } from "./plan.ts";

export type BenchmarkEntry = Experiment["benchmarks"][number];

export interface QACellSetup {
  entry: BenchmarkEntry;
  /** The entry's index in the file's `benchmarks` (for error fields). */
  index: number;
  settings: OptimizeSettings;
  slices: { train: number; validation: number };
  /** What hone measures once at the end: `test`, or `test-heldout` for a test-only benchmark (see testSplitOf). */
  testSplit: LoadableSplit;
  test: QATask[];
}

/**
 * The split a QA row is measured on: its test file, or for a test-only benchmark (searched on a pool carved from its
 * test file) the test file without that pool, so no question a method saw is measured.
 */
export const testSplitOf = (id: string): LoadableSplit => (isTestOnly(benchmark(id)) ? "test-heldout" : "test");

/** Resolves a QA cell's slices and search settings; an empty slice or a budget too small is an error naming the field. */
export async function qaCellSetup(exp: Experiment, cell: PlannedCell, o: RunOptions = {}): Promise<QACellSetup> {
  const index = exp.benchmarks.findIndex((b) => (b.name ?? b.benchmark) === cell.benchmark);
  const entry = exp.benchmarks[index] as BenchmarkEntry;
  const testSplit = testSplitOf(entry.benchmark);
  const load = (split: LoadableSplit, limit: number | undefined) =>
    loadSplit(entry.benchmark, split, { dir: entry.data_dir, seed: entry.split_seed, limit });
  const train = await load("train", entry.splits.train.limit);
  const validation = await load("validation", entry.splits.validation?.limit);
  const test = await load(testSplit, entry.splits.test.limit);
  for (const [name, tasks] of [
    ["train", train],
    ["validation", validation],
    ["test", test],
  ] as const)
    if (tasks.length === 0)
      throw configError(exp.file, `benchmarks.${index}.splits.${name}`, `${entry.benchmark}'s ${name} slice holds no question`);
  const fixed = qaFixedCalls(train.length, validation.length);
  if (exp.budget.unit === "evaluator_calls" && exp.budget.size < fixed)
    throw configError(
      exp.file,
      "budget.size",
      `${entry.benchmark}: the seed harness on ${train.length} train and the choice on ${validation.length} validation questions take ${fixed} evaluator calls, more than the budget's ${exp.budget.size}`,
    );
  const config = optimizeConfigSchema.parse({
    ...searchConfig(exp, cell),
    benchmark: {
      id: entry.benchmark,
      train: train.length,
      validation: validation.length,
      data_dir: entry.data_dir,
      split_seed: entry.split_seed,
    },
  });
  const settings = settingsFromConfig(config, 1);
  if (o.queue) settings.queue = o.queue;
  return { entry, index, settings, slices: { train: train.length, validation: validation.length }, testSplit, test };
}

/**
 * The QA test set as one identity component: the benchmark, the split and how many questions; its content hashes
 * every data file of the benchmark (their bytes) and the ids of the questions measured; the metric is the official
 * scorer's score metric.
 */
export function qaTaskSet(setup: QACellSetup) {
  const b = benchmark(setup.entry.benchmark);
  const dir = join(setup.entry.data_dir ?? dataDir(), b.id);
  const h = createHash("sha256");
  for (const f of b.files)
    h.update(`${f.name}\0`).update(
      createHash("sha256")
        .update(readFileSync(join(dir, f.name)))
        .digest("hex"),
    );
  h.update(`\0${setup.test.map((t) => t.id).join("\n")}`);
  return {
    id: `${b.id}/${setup.testSplit}[${setup.test.length}]`,
    content: h.digest("hex").slice(0, 32),
    metric: b.scorer.score,
    direction: "maximize" as const,
  };
}

/** The official scorer by name: the benchmark, its published metrics, and the one a question's score carries. */
export function qaScorer(id: string): string {
  const s = benchmark(id).scorer;
  return `${id} official scorer (metrics ${s.metrics.join(", ")}; score ${s.score})`;
}
