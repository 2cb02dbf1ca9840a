import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { HoneError } from "../../errors.ts";
import { rng } from "../../rng.ts";
import type { BenchmarkDef, QATask, Split } from "./benchmark.ts";
import { fetchBenchmark } from "./fetch.ts";
import { REGISTRY } from "./registry.ts";

export type { BenchmarkDef, Gold, QATask, Split } from "./benchmark.ts";

export const BENCHMARKS: Readonly<Record<string, BenchmarkDef>> = Object.fromEntries(REGISTRY.map((b) => [b.id, b]));

export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HONE_DATA_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "hone", "datasets");
}

export function benchmark(id: string): BenchmarkDef {
  const b = BENCHMARKS[id];
  if (!b) throw new HoneError("usage", `no benchmark "${id}"; hone knows ${Object.keys(BENCHMARKS).join(", ")}`);
  return b;
}

/** Whether every file of the benchmark is in `<dir>/<id>/`. */
export const isFetched = (b: BenchmarkDef, dir = dataDir()): boolean => b.files.every((f) => existsSync(join(dir, b.id, f.name)));

/** A benchmark published with a test file only (HumanEval, AIME, MATH-500, …): it is searched on its search pool. */
export const isTestOnly = (b: BenchmarkDef): boolean => !b.sizes.train && !b.sizes.validation && Boolean(b.sizes.test);

/**
 * The splits a user can ask for: the published ones, `train`/`validation` divided from a train file, and for a
 * test-only benchmark `train`/`validation` drawn from its search pool (`searchPool`).
 */
export function splitsOf(b: BenchmarkDef): Split[] {
  const out: Split[] = [];
  const searchable = Boolean(b.sizes.train) || isTestOnly(b);
  if (b.sizes.train || isTestOnly(b)) out.push("train");
  if (b.sizes.validation || searchable) out.push("validation");
  if (b.sizes.test) out.push("test");
  return out;
}

/**
 * What a split name can ask `loadSplit` for: a split, or `test-heldout`: the test file without its search pool (for
 * a benchmark with a train file, the whole test file). `hone compare` measures a test-only benchmark on it, so no
 * question a method saw is in the test measurement; `test` stays the official whole file.
 */
export type LoadableSplit = Split | "test-heldout";

/** The share of a test-only benchmark's test file set apart as its search pool. */
export const SEARCH_POOL_SHARE = 0.25;

const poolRank = (id: string) => createHash("sha256").update(`hone-search-pool\0${id}`).digest("hex");

/**
 * A test-only benchmark's search pool: the ⌈25%⌉ of its test questions (at least 2, and never all) whose ids have the
 * smallest sha256 of `hone-search-pool\0<id>`. It depends on the question ids only, never on a seed or the file's
 * order, so every cell and seed of a grid searches on the same pool and is measured on the same rest (`heldout`).
 * Both keep the file's order.
 */
export function searchPool(tasks: readonly QATask[]): { pool: QATask[]; heldout: QATask[] } {
  if (tasks.length < 3) return { pool: [], heldout: [...tasks] };
  const size = Math.min(tasks.length - 1, Math.max(2, Math.ceil(tasks.length * SEARCH_POOL_SHARE)));
  const chosen = new Set(
    tasks
      .map((t) => ({ id: t.id, rank: poolRank(t.id) }))
      .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
      .slice(0, size)
      .map((x) => x.id),
  );
  return { pool: tasks.filter((t) => chosen.has(t.id)), heldout: tasks.filter((t) => !chosen.has(t.id)) };
}

/** `hone datasets fetch` (see fetch.ts). */
export function fetchDataset(id: string, opts: { dir?: string; baseUrl?: string; record?: boolean } = {}): Promise<string> {
  return fetchBenchmark(benchmark(id), opts.dir ?? dataDir(), opts);
}

/**
 * A benchmark split: `test` as published; `train` and `validation` divided from the train file (a test-only
 * benchmark: from its search pool) by the split seed, 90% / 10%; `test-heldout` (see LoadableSplit).
 */
export async function loadSplit(
  id: string,
  split: LoadableSplit,
  opts: { dir?: string; seed?: number; limit?: number } = {},
): Promise<QATask[]> {
  const b = benchmark(id);
  const root = opts.dir ?? dataDir();
  const dir = join(root, id);
  if (!isFetched(b, root)) throw new HoneError("badTask", `${id} is not downloaded in ${dir}; run \`hone datasets fetch ${id}\``);
  if (!splitsOf(b).includes(split === "test-heldout" ? "test" : split))
    throw new HoneError("usage", `${id} has no ${split} split; it has ${splitsOf(b).join(", ")}`);
  let parts: Awaited<ReturnType<BenchmarkDef["load"]>>;
  try {
    parts = await b.load(dir);
  } catch (err) {
    if (err instanceof HoneError) throw err;
    throw new HoneError("badTask", `${id} in ${dir}: ${(err as Error).message}; fetch it again`);
  }
  const tasks = pick(b, parts, split, opts.seed ?? 0);
  return opts.limit ? tasks.slice(0, opts.limit) : tasks;
}

function pick(b: BenchmarkDef, parts: Awaited<ReturnType<BenchmarkDef["load"]>>, split: LoadableSplit, seed: number): QATask[] {
  const testOnly = isTestOnly(b);
  if (split === "test") return parts.test ?? [];
  if (split === "test-heldout") return testOnly ? searchPool(parts.test ?? []).heldout : (parts.test ?? []);
  if (split === "validation" && parts.validation) return parts.validation;
  const source = testOnly ? searchPool(parts.test ?? []).pool : (parts.train ?? []);
  const shuffled = seededShuffle(source, seed);
  // Both sides keep at least one question where there are two.
  const cut =
    shuffled.length < 2 ? shuffled.length : Math.min(shuffled.length - 1, Math.max(1, Math.floor(shuffled.length * 0.9)));
  return split === "train" ? shuffled.slice(0, cut) : shuffled.slice(cut);
}

function seededShuffle<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  const rand = rng((seed >>> 0) + 0x9e3779b9);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
