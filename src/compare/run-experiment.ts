// `hone compare <experiment>`: every cell × seed of the grid, a few at a time, each resumed where it stopped and a
// finished one skipped; then the report over the cell records.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { eachAtMost } from "../at-most.ts";
import { configError } from "../errors.ts";
import { checkSlurmRun } from "../loop/distributed/slurm-script.ts";
import type { OptimizeEvent } from "../loop/optimize.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { type RunOptions, runnableProblems } from "./cell-settings.ts";
import type { Experiment } from "./experiment.ts";
import type { PlannedCell } from "./plan.ts";
import { planCells } from "./plan.ts";
import { isFinished, runCell } from "./run-cell.ts";

export interface ExperimentRunOptions extends RunOptions {
  out: string;
  /** Cells × seeds at once (default 2). */
  cells?: number;
  /** One line per cell × seed started, finished or failed, and each notice once. */
  log?: (line: string) => void;
}

/** What `<out>/experiment.json` holds, so a reader (hone view's grid page) knows the grid before any cell finishes. */
export interface ExperimentManifest {
  format: "hone-experiment/1";
  name: string;
  file: string;
  baseline: string;
  budget: Experiment["budget"];
  /** Every cell × seed folder, relative to the out folder, in the order they run. */
  planned: string[];
}
export const EXPERIMENT_FILE = "experiment.json";

export interface ExperimentRunResult {
  out: string;
  planned: number;
  /** Cells × seeds already finished before this invocation (not run again). */
  skipped: number;
  ran: number;
}

/** Refuses, before anything is written, what this build cannot run; the first problem names its field. */
function assertRunnable(exp: Experiment, o: RunOptions): void {
  const problems = runnableProblems(exp, o);
  const [first, ...rest] = problems;
  if (!first) return;
  const more = rest.map((p) => `\n  ${p.field}: ${p.message}`).join("");
  throw configError(exp.file, first.field, `${first.message}${more}`);
}

export async function runExperiment(exp: Experiment, o: ExperimentRunOptions): Promise<ExperimentRunResult> {
  assertRunnable(exp, o);
  const out = resolve(o.out);
  if (o.slurm) checkSlurmRun(o.slurm, out);
  mkdirSync(out, { recursive: true });
  const log = o.log ?? (() => {});
  const planned = planCells(exp);
  writeJsonAtomic(join(out, EXPERIMENT_FILE), {
    format: "hone-experiment/1",
    name: exp.name,
    file: exp.file,
    baseline: exp.baseline,
    budget: exp.budget,
    planned: planned.map((c) => c.dir),
  } satisfies ExperimentManifest);
  const todo = planned.filter((c) => !isFinished(out, c));
  if (todo.length < planned.length) log(`${planned.length - todo.length} of ${planned.length} cell × seed runs already finished`);
  const notices = new Set<string>();
  const onEvent = (_c: PlannedCell, e: OptimizeEvent) => {
    if (e.type === "notice" && !notices.has(e.text)) {
      notices.add(e.text);
      log(`note: ${e.text}`);
    }
  };
  let done = 0;
  await eachAtMost(todo, o.cells ?? 2, async (cell) => {
    log(`start  ${cell.dir}`);
    try {
      const r = await runCell(exp, cell, { out, queue: o.queue, slurm: o.slurm, onEvent });
      done++;
      const score = r.final.tasks.map((t) => (t.score === null ? "-" : t.score.toPrecision(4))).join(" ");
      log(`done   ${cell.dir} (${done}/${todo.length}): test ${score}, ${r.cost[exp.budget.unit]} ${exp.budget.unit}`);
    } catch (err) {
      log(`failed ${cell.dir}: ${(err as Error).message.split("\n")[0]}`);
      throw err;
    }
  });
  return { out, planned: planned.length, skipped: planned.length - todo.length, ran: todo.length };
}
