// `hone compare <experiment>`: every cell × seed of the grid, a few at a time, each resumed where it stopped and a
// finished one skipped; then the report over the cell records.
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { eachAtMost } from "../at-most.ts";
import { configError } from "../errors.ts";
import { checkSlurmRun } from "../loop/distributed/slurm-script.ts";
import type { OptimizeEvent } from "../loop/optimize.ts";
import { redact } from "../model/errors.ts";
import { urlPassword } from "../secret-url.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { HONE_VERSION } from "../version.ts";
import { type RunOptions, runnableProblems } from "./cell-settings.ts";
import type { Experiment } from "./experiment.ts";
import type { PlannedCell } from "./plan.ts";
import { planCells } from "./plan.ts";
import { CELL_FAILED_FILE, CELL_FILE } from "./read-cells.ts";
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
  /** The hone version that ran the cells (absent in folders an earlier hone made): only it goes on with them. */
  hone?: string;
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

/**
 * Leaves why a cell × seed failed in its folder, so a report shows it as failed (never as a score, never as merely
 * unfinished); without the queue's password or the models' keys. A folder that cannot be written loses only this.
 */
function recordFailure(file: string, err: unknown, exp: Experiment, o: RunOptions): void {
  const keys = [exp.executor.api_key_env, exp.proposer.api_key_env].map((k) => (k ? process.env[k] : undefined));
  const secrets = [o.queue ? urlPassword(o.queue) : undefined, process.env.OPENAI_API_KEY, ...keys];
  const error = redact(err instanceof Error ? err.message : String(err), secrets).slice(0, 4000);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeJsonAtomic(file, { format: "hone-cell-failure/1", error, failed: new Date().toISOString() });
  } catch {
    // the error itself is what the caller reports
  }
}

/** What a finished cell's record says of the settings it was made with, field by field (the experiment file's names). */
function madeWith(rec: {
  identity?: {
    budget?: { unit?: unknown; size?: unknown };
    repeats?: unknown;
    measurement?: { executor?: { model?: unknown } };
    proposer?: { model?: unknown };
  };
}): Record<string, unknown> {
  const id = rec.identity;
  return {
    "budget.unit": id?.budget?.unit,
    "budget.size": id?.budget?.size,
    repeats: id?.repeats,
    "executor.model": id?.measurement?.executor?.model,
    "proposer.model": id?.proposer?.model,
  };
}

/**
 * A finished cell is never run again, so one made under other settings would be reported as this experiment's: the
 * first finished cell whose budget, repeats or models differ from the file's is refused, naming the field and the cell.
 */
function assertFinishedMatch(exp: Experiment, out: string, finished: readonly PlannedCell[]): void {
  const want = madeWith({
    identity: { budget: exp.budget, repeats: exp.repeats, measurement: { executor: exp.executor }, proposer: exp.proposer },
  });
  for (const cell of finished) {
    let rec: Parameters<typeof madeWith>[0];
    try {
      rec = JSON.parse(readFileSync(join(out, cell.dir, CELL_FILE), "utf8"));
    } catch {
      continue; // the report names a malformed record
    }
    const have = madeWith(rec);
    const field = Object.keys(want).find((k) => have[k] !== want[k]);
    if (field)
      throw configError(
        exp.file,
        field,
        `${join(out, cell.dir, CELL_FILE)} was made with ${field} ${JSON.stringify(have[field])}, not ${JSON.stringify(want[field])}: a finished cell is never run again, so give another --out (or remove the finished cell folders to run them again)`,
      );
  }
}

/**
 * A grid's cells are one version's measurements: cells another hone version started are neither resumed (it alone can
 * go on with its runs) nor reported beside this one's (the report would refuse every comparison with them), so an out
 * folder holding any is refused before anything runs, naming them.
 */
function assertSameVersion(exp: Experiment, out: string, planned: readonly PlannedCell[]): void {
  const file = join(out, EXPERIMENT_FILE);
  if (!existsSync(file)) return;
  let made: string | undefined;
  try {
    made = (JSON.parse(readFileSync(file, "utf8")) as Partial<ExperimentManifest>).hone;
  } catch {
    return; // a damaged manifest is written anew; the cells' own records are checked as they resume
  }
  if (made === HONE_VERSION) return;
  const started = planned.filter((c) => existsSync(join(out, c.dir))).map((c) => c.dir);
  if (started.length === 0) return;
  const named = started.slice(0, 5).join(", ") + (started.length > 5 ? ` and ${started.length - 5} more` : "");
  throw configError(
    exp.file,
    undefined,
    `${out} holds cells hone ${typeof made === "string" ? made.slice(0, 40) : "before 0.2.0"} ran (${named}), and this is hone ${HONE_VERSION}: another version's measurements are not compared with this one's, nor its runs resumed, so give another --out (or remove those cell folders)`,
  );
}

export async function runExperiment(exp: Experiment, o: ExperimentRunOptions): Promise<ExperimentRunResult> {
  assertRunnable(exp, o);
  const out = resolve(o.out);
  if (o.slurm) checkSlurmRun(o.slurm, out);
  const log = o.log ?? (() => {});
  const planned = planCells(exp);
  assertSameVersion(exp, out, planned);
  assertFinishedMatch(
    exp,
    out,
    planned.filter((c) => isFinished(out, c)),
  );
  mkdirSync(out, { recursive: true });
  writeJsonAtomic(join(out, EXPERIMENT_FILE), {
    format: "hone-experiment/1",
    name: exp.name,
    file: exp.file,
    baseline: exp.baseline,
    budget: exp.budget,
    planned: planned.map((c) => c.dir),
    hone: HONE_VERSION,
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
    const failure = join(out, cell.dir, CELL_FAILED_FILE);
    rmSync(failure, { force: true });
    try {
      const r = await runCell(exp, cell, { out, queue: o.queue, slurm: o.slurm, onEvent });
      done++;
      const score = r.final.tasks.map((t) => (t.score === null ? "-" : t.score.toPrecision(4))).join(" ");
      log(`done   ${cell.dir} (${done}/${todo.length}): test ${score}, ${r.cost[exp.budget.unit]} ${exp.budget.unit}`);
    } catch (err) {
      log(`failed ${cell.dir}: ${(err as Error).message.split("\n")[0]}`);
      recordFailure(failure, err, exp, o);
      throw err;
    }
  });
  return { out, planned: planned.length, skipped: planned.length - todo.length, ran: todo.length };
}
