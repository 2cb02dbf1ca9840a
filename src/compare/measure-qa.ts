// The platform's measurement of a QA cell: one harness (the method's final choice, or the seed harness) answering every
// question of the test split once per repeat, each repeat an ordinary `hone eval` run directory (its questions on the
// local pool, or with --queue on BullMQ workers). Resumable: a repeat
// whose directory is there (it appears by rename only once finished) is read back, never run again.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { type EvalSummary, evaluateBenchmark } from "../loop/eval.ts";
import type { QARunner } from "../loop/qa-runner.ts";
import type { ModelSettings } from "../model/resolve.ts";
import { removePartials } from "../store/atomic.ts";
import type { LoadableSplit } from "../task/qa/benchmarks.ts";
import type { ChoiceResult, TaskResult } from "./cell.ts";

export interface QAMeasureOptions {
  /** The harness folder to measure. */
  harness: string;
  /** The candidate's id in the cell's run ("seed" for the seed harness). */
  candidate: string;
  benchmark: string;
  split: LoadableSplit;
  limit?: number;
  dataDir?: string;
  repeats: number;
  /** The cell's seed; repeat r runs at seed `seed * 100 + r`, the same for the final choice and the seed harness. */
  seed: number;
  /** Where the repeats' run directories go: `<dir>/r<k>`. */
  dir: string;
  /** The executor, and how many questions at once. */
  executor: Partial<ModelSettings> & { model: string };
  concurrency: number;
  /** Questions on BullMQ workers (hone worker) through this Redis URL instead of the local pool. */
  queue?: string;
}

/**
 * The workers' runner for one repeat: its key names the repeat's folder, so a coordinator killed and started again
 * finds the jobs that finished meanwhile instead of running them twice.
 */
async function queueRunner(o: QAMeasureOptions, dir: string): Promise<QARunner | undefined> {
  if (!o.queue) return undefined;
  const { BullmqQARunner } = await import("../loop/distributed/bullmq.ts");
  const runKey = `compare-${createHash("sha256").update(dir).digest("hex").slice(0, 24)}`;
  return new BullmqQARunner({ url: o.queue, runKey, executor: o.executor });
}

/** What a finished repeat left: its summary (results per question). */
type Repeat = Pick<EvalSummary, "harness" | "results">;

function readRepeat(dir: string): Repeat | undefined {
  const file = join(dir, "summary.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Repeat) : undefined;
}

async function repeat(o: QAMeasureOptions, r: number): Promise<Repeat> {
  const dir = join(o.dir, `r${r}`);
  const done = readRepeat(dir);
  if (done) return done;
  mkdirSync(o.dir, { recursive: true });
  // A repeat killed while it ran left only its hidden build folder (named by the process that made it).
  removePartials(o.dir, `.r${r}.partial-`);
  const partial = join(o.dir, `.r${r}.partial-${process.pid}`);
  const runner = await queueRunner(o, dir);
  try {
    await evaluateBenchmark(
      {
        ...o.executor,
        concurrency: o.concurrency,
        harnessDir: o.harness,
        benchmark: o.benchmark,
        split: o.split,
        limit: o.limit,
        dataDir: o.dataDir,
        seed: o.seed * 100 + r,
        outDir: partial,
      },
      runner,
    );
  } finally {
    await runner?.close();
  }
  renameSync(partial, dir);
  return readRepeat(dir) as Repeat;
}

/** A question's result: the mean score of the repeats that completed; none completed is an invalid result with why. */
export function questionResult(id: string, answers: readonly EvalSummary["results"][number][]): TaskResult {
  const done = answers.filter((a) => a.status === "completed");
  if (done.length === 0) {
    const why = answers.find((a) => a.error)?.error ?? "no answer";
    return {
      task: id,
      score: null,
      valid: false,
      reason: `no completed answer in ${answers.length} repeat(s): ${why}`.slice(0, 4000),
    };
  }
  const score = done.reduce((a, x) => a + x.score, 0) / done.length;
  if (done.length === answers.length) return { task: id, score, valid: true };
  const why = answers.find((a) => a.status !== "completed" && a.error)?.error ?? "not completed";
  const reason = `${answers.length - done.length} of ${answers.length} repeats not completed (${why}): scored on the other ${done.length}`;
  return { task: id, score, valid: true, reason: reason.slice(0, 4000) };
}

/** Measures one harness on the QA test split, `repeats` times, one repeat after another; per question its mean score. */
export async function measureQAOnTest(o: QAMeasureOptions): Promise<ChoiceResult> {
  const reps: Repeat[] = [];
  for (let r = 0; r < o.repeats; r++) reps.push(await repeat(o, r));
  const first = reps[0] as Repeat;
  const byId = reps.map((x) => new Map(x.results.map((y) => [y.id, y])));
  const tasks = first.results.map((q) =>
    questionResult(
      q.id,
      byId.map((m) => m.get(q.id) ?? { ...q, status: "failed" as const, error: "not answered" }),
    ),
  );
  return { candidate: o.candidate, harness: first.harness.content_hash, tasks };
}
