import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { HoneError } from "../../errors.ts";
import { rng } from "../../rng.ts";
import { gsm8kFinalAnswer } from "./gsm8k.ts";

/** One QA problem. `gold` is held by hone's environment and scorer only; no harness, estimator or proposer sees it. */
export interface QATask {
  id: string;
  question: string;
  gold: string;
}

export interface BenchmarkDef {
  id: string;
  /** Answer format the final answer is expected in (told to the solver, used by the oracle). */
  answerFormat: (gold: string) => string;
  files: { name: string; url: string; sha256?: string }[];
  /** Rows of a downloaded file into tasks, with their split (`test`, or `train` to be divided by seed). */
  load(dir: string): { split: "train" | "test"; tasks: QATask[] }[];
}

const jsonl = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, string>);

export const BENCHMARKS: Record<string, BenchmarkDef> = {
  gsm8k: {
    id: "gsm8k",
    answerFormat: (gold) => `#### ${gsm8kFinalAnswer(gold)}`,
    files: [
      {
        name: "train.jsonl",
        url: "https://raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data/train.jsonl",
        sha256: "17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465",
      },
      {
        name: "test.jsonl",
        url: "https://raw.githubusercontent.com/openai/grade-school-math/master/grade_school_math/data/test.jsonl",
        sha256: "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14",
      },
    ],
    load: (dir) =>
      (["train", "test"] as const).map((split) => ({
        split,
        tasks: jsonl(join(dir, `${split}.jsonl`)).map((r, i) => ({
          id: `gsm8k-${split}-${i}`,
          question: r.question as string,
          gold: r.answer as string,
        })),
      })),
  },
  math500: {
    id: "math500",
    answerFormat: (gold) => `\\boxed{${gold}}`,
    files: [{ name: "test.jsonl", url: "https://raw.githubusercontent.com/openai/prm800k/main/prm800k/math_splits/test.jsonl" }],
    load: (dir) => [
      {
        split: "test",
        tasks: jsonl(join(dir, "test.jsonl")).map((r, i) => ({
          id: r.unique_id ?? `math500-${i}`,
          question: r.problem as string,
          gold: r.answer as string,
        })),
      },
    ],
  },
  hotpotqa: {
    id: "hotpotqa",
    answerFormat: (gold) => gold,
    files: [{ name: "dev.jsonl", url: "" }],
    load: (dir) => [
      {
        split: "test",
        tasks: jsonl(join(dir, "dev.jsonl")).map((r, i) => ({
          id: r.id ?? `hotpot-${i}`,
          question: r.question as string,
          gold: r.answer as string,
        })),
      },
    ],
  },
};

export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HONE_DATA_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "hone", "datasets");
}

export function benchmark(id: string): BenchmarkDef {
  const b = BENCHMARKS[id];
  if (!b) throw new HoneError("usage", `no benchmark "${id}"; hone knows ${Object.keys(BENCHMARKS).join(", ")}`);
  return b;
}

/**
 * `hone datasets fetch`: downloads each file from its canonical source (or `baseUrl`/<name> instead), checks the
 * sha256 and writes it atomically. A mismatch leaves nothing behind and says so.
 */
export async function fetchDataset(id: string, opts: { dir?: string; baseUrl?: string } = {}): Promise<string> {
  const b = benchmark(id);
  const dir = join(opts.dir ?? dataDir(), id);
  mkdirSync(dir, { recursive: true });
  for (const f of b.files) {
    const url = opts.baseUrl ? `${opts.baseUrl.replace(/\/$/, "")}/${f.name}` : f.url;
    if (!url) throw new HoneError("usage", `${id} has no canonical download; place ${f.name} in ${dir} yourself`);
    let body: Buffer;
    try {
      const res = await fetch(url);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      body = Buffer.from(await res.arrayBuffer());
    } catch (err) {
      throw new HoneError("endpoint", `cannot download ${url}: ${(err as Error).message}`);
    }
    const sha = createHash("sha256").update(body).digest("hex");
    if (f.sha256 && sha !== f.sha256)
      throw new HoneError("badTask", `${url}: sha256 ${sha} does not match the expected ${f.sha256}; the file was not saved`);
    writeFileSync(join(dir, `${f.name}.part`), body);
    renameSync(join(dir, `${f.name}.part`), join(dir, f.name));
  }
  return dir;
}

/** A benchmark split: `test` as published; `train` and `validation` divided from the train file by a fixed seed. */
export function loadSplit(
  id: string,
  split: "train" | "validation" | "test",
  opts: { dir?: string; seed?: number; limit?: number } = {},
): QATask[] {
  const b = benchmark(id);
  const dir = join(opts.dir ?? dataDir(), id);
  if (!b.files.every((f) => existsSync(join(dir, f.name))))
    throw new HoneError("badTask", `${id} is not downloaded in ${dir}; run \`hone datasets fetch ${id}\``);
  const parts = b.load(dir);
  let tasks: QATask[];
  if (split === "test") tasks = parts.find((p) => p.split === "test")?.tasks ?? [];
  else {
    const train = parts.find((p) => p.split === "train")?.tasks;
    if (!train) throw new HoneError("usage", `${id} has no train data to divide into train and validation`);
    const shuffled = seededShuffle(train, opts.seed ?? 0);
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
