// The platform's measurement of a cell: one harness (the method's final choice, or the seed harness) rolled out once
// per test task and repeat, each an ordinary `hone run` directory. Resumable: a repeat whose run directory is there
// (it appears by rename only once finished) is read back, never run again.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RunHarnessOptions, runHarness } from "../loop/run.ts";
import { removePartials } from "../store/atomic.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { ChoiceResult, TaskResult } from "./cell.ts";

export interface TestMeasureOptions {
  /** The harness folder to measure. */
  harness: string;
  /** The candidate's id in the cell's run ("seed" for the seed harness). */
  candidate: string;
  tasks: readonly DiscoveryTask[];
  repeats: number;
  /** The cell's seed; repeat r runs at seed `seed * 100 + r`, the same for the final choice and the seed harness. */
  seed: number;
  /** Where the repeats' run directories go: `<dir>/<task>/r<k>`. */
  dir: string;
  run: Omit<RunHarnessOptions, "outDir" | "seed">;
}

/** What one finished repeat left in its result.json. */
export interface RepeatResult {
  best_score: number | null;
  best_valid: boolean;
  status: string;
  error?: string;
  harness: { content_hash: string };
}

function readRepeat(dir: string): RepeatResult | undefined {
  const file = join(dir, "result.json");
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as RepeatResult;
}

async function repeat(o: TestMeasureOptions, task: DiscoveryTask, r: number): Promise<RepeatResult> {
  const dir = join(o.dir, task.id, `r${r}`);
  const done = readRepeat(dir);
  if (done) return done;
  // A repeat killed while it ran left only its hidden build folder: `.r<N>.partial`, which the next run clears once it
  // holds it, or, where runs go without the lock, one named by the process that made it.
  removePartials(join(o.dir, task.id), `.r${r}.partial-`);
  await runHarness(o.harness, task, { ...o.run, outDir: dir, seed: o.seed * 100 + r });
  return readRepeat(dir) as RepeatResult;
}

/**
 * A task's result: the mean of its valid repeats; no valid repeat is an invalid result with the reason, and some but
 * not all valid is a valid result whose reason says how many repeats it rests on.
 */
export function taskResult(task: string, repeats: readonly RepeatResult[]): TaskResult {
  const scores = repeats.filter((x) => x.best_valid && x.best_score !== null).map((x) => x.best_score as number);
  if (scores.length === 0) {
    const why = repeats.find((x) => x.error)?.error ?? repeats[0]?.status ?? "no repeat";
    return { task, score: null, valid: false, reason: `no valid program in ${repeats.length} repeat(s): ${why}`.slice(0, 4000) };
  }
  const score = scores.reduce((a, b) => a + b, 0) / scores.length;
  const left = repeats.length - scores.length;
  if (left === 0) return { task, score, valid: true };
  // Scored on fewer repeats than every other task: said beside the score, which the report shows.
  const why = repeats.find((x) => !(x.best_valid && x.best_score !== null))?.error ?? "no valid program";
  const reason = `${left} of ${repeats.length} repeats without a valid program (${why}): scored on the other ${scores.length}`;
  return { task, score, valid: true, reason: reason.slice(0, 4000) };
}

/**
 * Measures one harness on every test task, `repeats` times each: one repeat after another in this process, all at
 * once on a remote runner (BullMQ workers or Slurm), which spreads them as it can.
 */
export async function measureOnTest(o: TestMeasureOptions): Promise<ChoiceResult> {
  const all = o.tasks.flatMap((task) => Array.from({ length: o.repeats }, (_, r) => ({ task, r })));
  const results: RepeatResult[] = [];
  if (o.run.queue || o.run.slurm) results.push(...(await Promise.all(all.map(({ task, r }) => repeat(o, task, r)))));
  else for (const { task, r } of all) results.push(await repeat(o, task, r));
  const tasks = o.tasks.map((task, i) => taskResult(task.id, results.slice(i * o.repeats, (i + 1) * o.repeats)));
  return { candidate: o.candidate, harness: results[0]?.harness.content_hash ?? "", tasks };
}
