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

/** The splits a user can ask for: the published ones, and `train`/`validation` divided from a train file. */
export function splitsOf(b: BenchmarkDef): Split[] {
  const out: Split[] = [];
  if (b.sizes.train) out.push("train");
  if (b.sizes.validation || b.sizes.train) out.push("validation");
  if (b.sizes.test) out.push("test");
  return out;
}

/** `hone datasets fetch` (see fetch.ts). */
export function fetchDataset(id: string, opts: { dir?: string; baseUrl?: string; record?: boolean } = {}): Promise<string> {
  return fetchBenchmark(benchmark(id), opts.dir ?? dataDir(), opts);
}

/** A benchmark split: `test` as published; `train` and `validation` divided from the train file by a fixed seed. */
export async function loadSplit(
  id: string,
  split: Split,
  opts: { dir?: string; seed?: number; limit?: number } = {},
): Promise<QATask[]> {
  const b = benchmark(id);
  const root = opts.dir ?? dataDir();
  const dir = join(root, id);
  if (!isFetched(b, root)) throw new HoneError("badTask", `${id} is not downloaded in ${dir}; run \`hone datasets fetch ${id}\``);
  if (!splitsOf(b).includes(split)) throw new HoneError("usage", `${id} has no ${split} split; it has ${splitsOf(b).join(", ")}`);
  let parts: Awaited<ReturnType<BenchmarkDef["load"]>>;
  try {
    parts = await b.load(dir);
  } catch (err) {
    if (err instanceof HoneError) throw err;
    throw new HoneError("badTask", `${id} in ${dir}: ${(err as Error).message}; fetch it again`);
  }
  let tasks: QATask[];
  if (split === "test") tasks = parts.test ?? [];
  else if (split === "validation" && parts.validation) tasks = parts.validation;
  else {
    const shuffled = seededShuffle(parts.train ?? [], opts.seed ?? 0);
    const cut = Math.floor(shuffled.length * 0.9);
    tasks = split === "train" ? shuffled.slice(0, cut) : shuffled.slice(cut);
  }
  return opts.limit ? tasks.slice(0, opts.limit) : tasks;
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
