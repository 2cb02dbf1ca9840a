/** What a benchmark is for hone: its files, how to read them, its official scorer, and its oracle answers. */

/** A gold answer as the dataset gives it: text, a list of accepted aliases, or structured (BFCL's calls). */
export type Gold = string | number | boolean | null | readonly Gold[] | { readonly [key: string]: Gold };

/** One QA problem. `gold` is held by hone's environment and scorer only; no harness, estimator or proposer sees it. */
export interface QATask {
  id: string;
  question: string;
  gold: Gold;
}

export type Split = "train" | "validation" | "test";
export type Tasks = Partial<Record<Split, QATask[]>>;

/** One published file: its canonical URL (pinned to a commit or release) and sha256. */
export interface DatasetFile {
  name: string;
  url: string;
  /**
   * The file's sha256, or undefined where it could not be verified when the benchmark was added (the fetch then
   * refuses unless told to record what it gets; see `hone datasets fetch --record`).
   */
  sha256?: string;
  bytes?: number;
}

/** A benchmark's official scorer: its metrics by their published names, and the one that decides "correct". */
export interface OfficialScorer {
  /** Metric names, in the order the benchmark's authors report them; the first is the primary 0/1 metric. */
  metrics: readonly string[];
  /** The metric a task's `score` carries (the primary one unless the benchmark reports a graded one, like F1). */
  score: string;
  apply(response: string, gold: Gold): Record<string, number>;
  /** The answer the primary metric reads from a response (for display only). */
  extract(response: string): string | undefined;
}

export interface BenchmarkDef {
  id: string;
  title: string;
  /** The data's licence, as its authors state it. */
  licence: string;
  /** Where the benchmark is published. */
  homepage: string;
  files: DatasetFile[];
  /** Published size of each split hone reads (`validation` is divided from `train` by seed where absent). */
  sizes: Partial<Record<Split, number>>;
  /** The splits' tasks from the downloaded files (in `dir`). */
  load(dir: string): Tasks | Promise<Tasks>;
  scorer: OfficialScorer;
  /** How the solver is asked to write its final answer. */
  answerFormat: string;
  /** The gold answer in that form (the oracle harness; checks scorer and plumbing). */
  oracleAnswer(gold: Gold): string;
  /** A plausible wrong answer in that form (the wrong-oracle harness; must score 0). */
  wrongAnswer(gold: Gold): string;
}

export function goldText(benchmark: string, gold: Gold): string {
  if (typeof gold === "string") return gold;
  throw new Error(`${benchmark}: the gold answer is one string (the dataset's answer field)`);
}

export function goldList(benchmark: string, gold: Gold): string[] {
  if (Array.isArray(gold) && gold.length > 0 && gold.every((g) => typeof g === "string")) return gold as string[];
  throw new Error(`${benchmark}: the gold answer is a non-empty list of accepted answer strings`);
}
