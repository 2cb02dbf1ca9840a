import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as z from "zod";
import { configError } from "../errors.ts";
import { readConfigFile } from "../loop/config-file.ts";
import { optimizeConfigSchema } from "../loop/optimize-config.ts";
import { builtinTaskIds } from "../task/builtin.ts";
import { BENCHMARKS, splitsOf } from "../task/qa/benchmarks.ts";

/** The units a budget can be counted in; each is also a field of a cell's cost (cell.ts), so spent = cost[unit]. */
/** The largest seed: a test repeat runs at seed·100 + r (r < 100), which must stay a 32-bit seed (date-like seeds pass). */
const MAX_SEED = Math.floor((2 ** 32 - 100) / 100);

export const BUDGET_UNITS = ["evaluator_calls", "executor_tokens", "proposer_tokens", "seconds"] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** The model settings of `hone optimize --config` (one shape for both files). */
const modelSchema = optimizeConfigSchema.shape.executor.unwrap();

// Grid labels become folder names (`<benchmark>+<harness>+<method>`), so "+" and "/" are not allowed in them.
const label = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "use letters, digits, '.', '_' and '-' (at most 64)");
const limit = z.object({ limit: z.number().int().min(1).max(1_000_000).optional() }).strict();
const taskRefs = z.array(z.string().min(1).max(1000)).min(1).max(1000);

const benchmarkSchema = z
  .object({
    benchmark: z.string().min(1).describe("a QA benchmark id (`hone datasets` lists them)"),
    name: label.optional().describe("the grid's label for it (default: the benchmark id)"),
    data_dir: z.string().min(1).optional().describe("where the benchmark's files are (default: hone's data folder)"),
    split_seed: z.number().int().min(0).default(0).describe("divides train and validation, the same for every cell"),
    splits: z
      .object({ train: limit, validation: limit.optional(), test: limit })
      .strict()
      .describe(
        "train/validation: what the method sees (a test-only benchmark: drawn from its search pool, a fixed quarter of its test file); test: what hone measures once, at the end (a test-only benchmark: its test file without the search pool, test-heldout); a limit takes the first n, none the whole split",
      ),
    harnesses: z.array(label).min(1).optional().describe("the harnesses run on it (default: all)"),
  })
  .strict();

const taskGroupSchema = z
  .object({
    name: label.describe("the grid's label for this group of discovery tasks"),
    tasks_dir: z.string().min(1).optional().describe("a folder of task folders with tasks.yaml (default: the built-in tasks)"),
    splits: z
      .object({ train: taskRefs, validation: taskRefs.optional(), test: taskRefs.optional() })
      .strict()
      .describe("task ids or folders; test defaults to train (test-time discovery, disclosed in the report)"),
    harnesses: z.array(label).min(1).optional(),
  })
  .strict();

const harnessSchema = z
  .object({
    name: label,
    path: z.string().min(1).describe("a harness package (agent.yaml) or a harness program (harness.json)"),
    methods: z
      .array(label)
      .min(1)
      .optional()
      .describe("the methods run on it (default: all); a harness program can only be changed by methods that write folders"),
  })
  .strict();

const methodSchema = z
  .object({
    method: z
      .string()
      .min(1)
      .max(1000)
      .describe("a method name (`hone methods` lists them), or a folder with method.json (a method given as a program)"),
    name: label.optional().describe("the grid's label (default: the method name); needed when a method appears twice"),
    params: z.record(z.string(), z.unknown()).default({}),
    proposals: z
      .number()
      .int()
      .min(1)
      .max(64)
      .optional()
      .describe("proposals per round for this method (default: search.proposals)"),
  })
  .strict();

/** How every cell searches: the same shape of round for every method unless a method says otherwise. */
const searchSchema = z
  .object({
    proposals: z.number().int().min(1).max(64).default(4).describe("proposals per round (K)"),
    max_evals: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe("evaluator calls per rollout, in the search and on the test split (default: the task's budget)"),
    noise_repeats: z.number().int().min(1).max(100).default(3).describe("as hone optimize --noise-repeats"),
    paired: z.boolean().default(false).describe("as hone optimize --paired"),
    concurrency: z.number().int().min(1).max(256).default(4).describe("rollouts at once within a cell"),
  })
  .strict();

/** An experiment file for `hone compare`: the grid benchmark × harness × method, its seeds, models and one budget. */
export const experimentSchema = z
  .object({
    $schema: z.string().optional(),
    name: label,
    benchmarks: z.array(benchmarkSchema).max(64).default([]),
    tasks: z.array(taskGroupSchema).max(64).default([]),
    harnesses: z.array(harnessSchema).min(1).max(64),
    methods: z.array(methodSchema).min(1).max(64),
    // A seed's test repeats run at seed·100 + r, which must stay distinct in a 32-bit generator, and its folder
    // (seed-<n>) is read back only up to ten digits: at most ten million keeps every seed its own and in the report.
    seeds: z.array(z.number().int().min(0).max(MAX_SEED)).min(1).max(100),
    executor: modelSchema.default({ model: "offline" }),
    proposer: modelSchema.default({ model: "offline" }),
    budget: z
      .object({ unit: z.enum(BUDGET_UNITS), size: z.number().positive().max(1e12) })
      .strict()
      .describe("one budget for every cell, in one unit; a cell stops when it is spent"),
    search: searchSchema.default({ proposals: 4, noise_repeats: 3, paired: false, concurrency: 4 }),
    repeats: z.number().int().min(1).max(100).default(1).describe("measurements per task on the test split, everywhere"),
    baseline: z.string().min(1).default("random").describe("the method the report compares the others against"),
    out: z.string().min(1).optional(),
  })
  .strict();

export type ExperimentInput = z.input<typeof experimentSchema>;
export type Experiment = z.infer<typeof experimentSchema> & { file: string };

/** What a reader may be told: the method names the registry knows (every name is accepted when absent). */
export interface ReadOptions {
  methods?: readonly string[];
}

/** Reads, validates and resolves an experiment file; every error names the file and the field. */
export function readExperiment(file: string, o: ReadOptions = {}): Experiment {
  const data = readConfigFile(file, experimentSchema);
  const exp = resolvePaths(data, resolve(file));
  checkExperiment(exp, o);
  return exp;
}

const isPath = (p: string) => p.startsWith("/") || p.startsWith(".") || p.includes("/");

function resolvePaths(data: z.infer<typeof experimentSchema>, file: string): Experiment {
  const base = dirname(file);
  const at = (p: string) => resolve(base, p);
  const ref = (p: string) => (isPath(p) ? at(p) : p);
  return {
    ...data,
    file,
    benchmarks: data.benchmarks.map((b) => ({ ...b, data_dir: b.data_dir && at(b.data_dir) })),
    tasks: data.tasks.map((t) => ({
      ...t,
      tasks_dir: t.tasks_dir && at(t.tasks_dir),
      splits: {
        train: t.splits.train.map(ref),
        validation: t.splits.validation?.map(ref),
        test: t.splits.test?.map(ref),
      },
    })),
    harnesses: data.harnesses.map((h) => ({ ...h, path: at(h.path) })),
    methods: data.methods.map((m) => ({ ...m, method: isPath(m.method) ? at(m.method) : m.method })),
    out: data.out && at(data.out),
  };
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** Checks what the schema cannot: names unique per axis, references resolvable, folders present. */
export function checkExperiment(exp: Experiment, o: ReadOptions = {}): void {
  const fail: Fail = (field, message) => {
    throw configError(exp.file, field, message);
  };
  if (exp.benchmarks.length + exp.tasks.length === 0) fail("benchmarks", "name at least one benchmark or task group");
  unique(exp.benchmarks.map((b) => b.name ?? b.benchmark).concat(exp.tasks.map((t) => t.name)), "benchmarks", fail);
  unique(
    exp.harnesses.map((h) => h.name),
    "harnesses",
    fail,
  );
  unique(
    exp.methods.map((m) => m.name ?? m.method),
    "methods",
    fail,
  );
  unique(exp.seeds.map(String), "seeds", fail);
  exp.harnesses.forEach((h, i) => {
    if (!isDir(h.path)) fail(`harnesses.${i}.path`, `${h.path} is not a folder`);
    if (!existsSync(join(h.path, "agent.yaml")) && !existsSync(join(h.path, "harness.json")))
      fail(`harnesses.${i}.path`, `${h.path} has neither agent.yaml (a harness package) nor harness.json (a harness program)`);
  });
  exp.methods.forEach((m, i) => {
    if (isPath(m.method)) {
      if (!existsSync(join(m.method, "method.json"))) fail(`methods.${i}.method`, `${m.method} has no method.json`);
      if (!m.name) fail(`methods.${i}.name`, "a method given as a folder needs a name (the grid's label)");
    } else if (!/^[a-z][a-z0-9_-]{0,63}$/.test(m.method))
      fail(`methods.${i}.method`, "a method name: lowercase letters, digits, '_' and '-' (or a folder with method.json)");
    else if (o.methods && !o.methods.includes(m.method))
      fail(`methods.${i}.method`, `no method "${m.method}"; hone knows ${o.methods.join(", ")}`);
  });
  const names = exp.methods.map((m) => m.name ?? m.method);
  exp.harnesses.forEach((h, i) => {
    h.methods?.forEach((m, j) => {
      if (!names.includes(m)) fail(`harnesses.${i}.methods.${j}`, `no method named "${m}"; the file names ${names.join(", ")}`);
    });
  });
  if (!names.includes(exp.baseline)) fail("baseline", `"${exp.baseline}" is not one of the methods (${names.join(", ")})`);
  exp.benchmarks.forEach((b, i) => {
    checkBenchmark(exp, b, i, fail);
  });
  exp.tasks.forEach((t, i) => {
    checkTaskGroup(exp, t, i, fail);
  });
}

type Fail = (field: string, message: string) => never;

function unique(names: string[], field: string, fail: Fail): void {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) fail(field, `"${n}" appears twice; give each entry its own name`);
    seen.add(n);
  }
}

function checkHarnessRefs(exp: Experiment, refs: string[] | undefined, field: string, fail: Fail): void {
  const known = exp.harnesses.map((h) => h.name);
  refs?.forEach((r, j) => {
    if (!known.includes(r)) fail(`${field}.harnesses.${j}`, `no harness named "${r}"; the file names ${known.join(", ")}`);
  });
}

function checkBenchmark(exp: Experiment, b: Experiment["benchmarks"][number], i: number, fail: Fail): void {
  const def = BENCHMARKS[b.benchmark];
  if (!def) fail(`benchmarks.${i}.benchmark`, `no benchmark "${b.benchmark}"; hone knows ${Object.keys(BENCHMARKS).join(", ")}`);
  const has = splitsOf(def);
  for (const s of ["train", "validation", "test"] as const)
    if (b.splits[s] && !has.includes(s))
      fail(`benchmarks.${i}.splits.${s}`, `${b.benchmark} has no ${s} split; it has ${has.join(", ")}`);
  if (b.data_dir && !isDir(b.data_dir)) fail(`benchmarks.${i}.data_dir`, `${b.data_dir} is not a folder`);
  checkHarnessRefs(exp, b.harnesses, `benchmarks.${i}`, fail);
}

function checkTaskGroup(exp: Experiment, t: Experiment["tasks"][number], i: number, fail: Fail): void {
  if (t.tasks_dir && !isDir(t.tasks_dir)) fail(`tasks.${i}.tasks_dir`, `${t.tasks_dir} is not a folder`);
  const builtin = builtinTaskIds();
  for (const s of ["train", "validation", "test"] as const)
    t.splits[s]?.forEach((ref, j) => {
      const field = `tasks.${i}.splits.${s}.${j}`;
      if (isPath(ref)) {
        if (!isDir(ref)) fail(field, `${ref} is not a task folder`);
      } else if (!t.tasks_dir && !builtin.includes(ref)) fail(field, `no built-in task "${ref}"; hone has ${builtin.join(", ")}`);
    });
  checkHarnessRefs(exp, t.harnesses, `tasks.${i}`, fail);
}
