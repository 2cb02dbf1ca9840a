// `hone compare <experiment>`: every cell × seed of the grid, a few at a time, each resumed where it stopped and a
// finished one skipped; then the report over the cell records.
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { eachAtMost } from "../at-most.ts";
import { configError, HoneError } from "../errors.ts";
import { checkSlurmRun } from "../loop/distributed/slurm-script.ts";
import type { OptimizeEvent } from "../loop/optimize.ts";
import { heldMessage } from "../loop/run-writer.ts";
import { redact } from "../model/errors.ts";
import { oneLine } from "../printable.ts";
import { urlPassword } from "../secret-url.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import { lockRunDir } from "../store/run-lock.ts";
import { HONE_VERSION } from "../version.ts";
import { MAX_SETTING_DEPTH, nestsAtMost } from "./cell.ts";
import {
  budgetProblems,
  type CellSettings,
  cellSettings,
  changedSettings,
  type DigestMemo,
  type RunOptions,
  runnableProblems,
  seedMeasurementSettings,
} from "./cell-settings.ts";
import type { Experiment } from "./experiment.ts";
import type { PlannedCell } from "./plan.ts";
import { planCells, seedDir } from "./plan.ts";
import { qaCellSetup } from "./qa-cell.ts";
import { CELL_FAILED_FILE, CELL_FILE } from "./read-cells.ts";
import { isFinished, runCell, SEED_FOLDER } from "./run-cell.ts";

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
async function assertRunnable(exp: Experiment, o: RunOptions): Promise<void> {
  const early = runnableProblems(exp, o);
  const problems = early.length > 0 ? early : await budgetProblems(exp, async (cell) => (await qaCellSetup(exp, cell, o)).slices);
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

/**
 * Where a cell × seed's settings are recorded as it starts, beside its run folder (`<cell>/seed-<n>.settings.json`:
 * optimize starts in an empty folder), and the seed harness's shared test measurement's beside its folder.
 */
export const settingsFile = (folder: string) => `${folder}.settings.json`;
const seedMeasurementFolder = (out: string, c: PlannedCell) =>
  join(out, SEED_FOLDER, `${c.benchmark}+${c.harness}`, seedDir(c.seed));

/** A settings record as JSON read back: an object, or nothing known (absent, damaged, or written by an earlier hone). */
function readSettings(file: string, pick: (raw: Record<string, unknown>) => unknown = (r) => r): CellSettings | undefined {
  const st = lstatSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || st.size > 32 << 20) return undefined;
  try {
    const raw = JSON.parse(readFileSync(file, "utf8")) as unknown;
    const v = raw && typeof raw === "object" && !Array.isArray(raw) ? pick(raw as Record<string, unknown>) : undefined;
    // One nested too deeply to compare is as unknown as an earlier hone's (a well-formed cell.json never is).
    const ok = v && typeof v === "object" && !Array.isArray(v) && nestsAtMost(v, MAX_SETTING_DEPTH + 1);
    return ok ? (v as CellSettings) : undefined;
  } catch {
    return undefined;
  }
}

const started = (out: string, c: PlannedCell) => existsSync(join(out, c.dir, "hone.db"));

/** What a cell × seed was made (or started) under: its cell.json's settings, else its start record if it has begun. */
function recordedSettings(out: string, c: PlannedCell): CellSettings | undefined {
  if (isFinished(out, c)) return readSettings(join(out, c.dir, CELL_FILE), (r) => r.settings);
  return started(out, c) ? readSettings(settingsFile(join(out, c.dir))) : undefined;
}

/**
 * The planned cells' finished seeds the file no longer plans (`seeds` changed): the report reads them beside the
 * planned ones, so they too must have been made under the file's settings.
 */
function unplannedFinished(out: string, planned: readonly PlannedCell[]): PlannedCell[] {
  const dirs = new Set(planned.map((c) => c.dir));
  const byCell = new Map(planned.map((c) => [c.cell, c]));
  const extra: PlannedCell[] = [];
  for (const [name, c] of byCell) {
    const folder = join(out, name);
    if (!lstatSync(folder, { throwIfNoEntry: false })?.isDirectory()) continue;
    for (const e of readdirSync(folder)) {
      const seed = /^seed-(0|[1-9][0-9]{0,9})$/.exec(e)?.[1];
      const other = seed === undefined ? undefined : { ...c, seed: Number(seed), dir: `${name}/${e}` };
      if (other && !dirs.has(other.dir) && isFinished(out, other)) extra.push(other);
    }
  }
  return extra;
}

// A record's keys and values can be anyone's (a folder someone sent): shown, never obeyed by a terminal.
const shown = (v: unknown) => {
  const text = oneLine(JSON.stringify(v ?? null));
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};
const named = (keys: readonly string[]) => keys.map((k) => oneLine(k.slice(0, 200))).join(", ");

/**
 * A finished cell is never run again and a started one resumes with the settings it began with, so a cell × seed made
 * under other settings than the file's would be reported as this experiment's: every such one (finished, started and
 * not failed, or a finished seed the file no longer plans) is refused before anything runs, naming the cell, the
 * settings that changed and their values. Cells with no record of their settings (an earlier hone's) are checked by
 * assertFinishedMatch alone.
 */
function assertSettingsMatch(
  exp: Experiment,
  out: string,
  cells: readonly PlannedCell[],
  want: (c: PlannedCell) => CellSettings,
): void {
  const changed: { dir: string; keys: string[]; have: CellSettings; want: CellSettings }[] = [];
  for (const c of cells) {
    if (failedStart(out, c)) continue; // started again afresh (restartFailed)
    const have = recordedSettings(out, c);
    const keys = have ? changedSettings(have, want(c)) : [];
    if (have && keys.length > 0) changed.push({ dir: c.dir, keys, have, want: want(c) });
  }
  const [first] = changed;
  if (!first) return;
  const line = (x: (typeof changed)[number]) =>
    `${x.dir} was made with ${x.keys.map((k) => `${named([k])} ${shown(x.have[k])}, not ${shown(x.want[k])}`).join("; ")}`;
  const listed = changed.slice(0, 5).map(line).join("\n  ");
  const more = changed.length > 5 ? `\n  and ${changed.length - 5} more` : "";
  throw configError(
    exp.file,
    named(first.keys.slice(0, 1)),
    `${changed.length} cell × seed run(s) in ${out} were made under other settings than the file gives now, and a finished cell is never run again nor a started one resumed under others:\n  ${listed}${more}\ngive another --out (or remove those seed folders to run them again)`,
  );
}

/** A started cell × seed whose last attempt failed (its cell-failed.json): it has no result to keep. */
const failedStart = (out: string, c: PlannedCell) =>
  !isFinished(out, c) && started(out, c) && existsSync(join(out, c.dir, CELL_FAILED_FILE));

/**
 * A failed cell × seed is tried again; one that began under other settings (a method program mended since, say) would
 * resume with its old ones, so it starts again from nothing, and the log says so, naming what changed.
 */
function restartFailed(
  out: string,
  todo: readonly PlannedCell[],
  want: (c: PlannedCell) => CellSettings,
  log: (l: string) => void,
) {
  for (const c of todo) {
    if (!failedStart(out, c)) continue;
    const have = readSettings(settingsFile(join(out, c.dir)));
    const keys = have ? changedSettings(have, want(c)) : [];
    if (keys.length === 0) continue;
    rmSync(join(out, c.dir), { recursive: true, force: true });
    log(`note: ${c.dir} failed under other ${named(keys)} than the file gives now: started again from the beginning`);
  }
}

/**
 * The seed harness's test measurement at a seed is shared by every method's cell; one made under other settings (the
 * test tasks' or the harness's files, the executor, max_evals) is measured again, and the log says so. One without a
 * record (an earlier hone's) is kept; a new one's record is written before it is made.
 */
function refreshSeedMeasurements(
  out: string,
  todo: readonly PlannedCell[],
  want: (c: PlannedCell) => CellSettings,
  log: (l: string) => void,
): void {
  const seen = new Set<string>();
  for (const c of todo) {
    const folder = seedMeasurementFolder(out, c);
    if (seen.has(folder)) continue;
    seen.add(folder);
    const rec = seedMeasurementSettings(want(c));
    const have = readSettings(settingsFile(folder));
    if (existsSync(folder) && !have) continue;
    const keys = have ? changedSettings(have, rec) : [];
    if (existsSync(folder) && keys.length === 0) continue;
    if (keys.length > 0 && existsSync(folder)) {
      rmSync(folder, { recursive: true, force: true });
      log(
        `note: the seed harness's test measurement ${join(SEED_FOLDER, `${c.benchmark}+${c.harness}`, seedDir(c.seed))} was made with other ${named(keys)}: measured again`,
      );
    }
    mkdirSync(dirname(folder), { recursive: true });
    writeJsonAtomic(settingsFile(folder), rec);
  }
}

/** Records the settings of each cell × seed about to start afresh; a started one keeps its own (checked equal). */
function recordStarts(out: string, todo: readonly PlannedCell[], want: (c: PlannedCell) => CellSettings): Set<string> {
  const known = new Set<string>();
  for (const c of todo) {
    const file = settingsFile(join(out, c.dir));
    if (started(out, c)) {
      if (readSettings(file)) known.add(c.dir);
      continue; // an earlier hone's started cell: what it began with is unknown, and its cell.json says so
    }
    mkdirSync(dirname(file), { recursive: true });
    writeJsonAtomic(file, want(c));
    known.add(c.dir);
  }
  return known;
}

export async function runExperiment(exp: Experiment, o: ExperimentRunOptions): Promise<ExperimentRunResult> {
  await assertRunnable(exp, o);
  const out = resolve(o.out);
  if (o.slurm) checkSlurmRun(o.slurm, out);
  // An out folder that is there is held before its cells are read (another hone compare may be writing them); a new
  // one is made, and held, only once the file has passed every check.
  const held = existsSync(out) ? lockExperiment(out) : undefined;
  try {
    const log = o.log ?? (() => {});
    const planned = planCells(exp);
    assertSameVersion(exp, out, planned);
    assertFinishedMatch(
      exp,
      out,
      planned.filter((c) => isFinished(out, c)),
    );
    const extra = unplannedFinished(out, planned);
    const memo: DigestMemo = new Map();
    const settings = new Map<string, CellSettings>();
    for (const c of [...planned, ...extra]) settings.set(c.dir, await cellSettings(exp, c, memo));
    const want = (c: PlannedCell) => settings.get(c.dir) as CellSettings;
    assertSettingsMatch(exp, out, [...planned, ...extra], want);
    mkdirSync(out, { recursive: true });
    const lock = held ?? lockExperiment(out);
    try {
      return await runLocked(exp, o, { out, planned, want, log });
    } finally {
      if (!held) lock?.release();
    }
  } finally {
    held?.release();
  }
}

/**
 * One `hone compare` at a time on an out folder: a second one (a resume started while the first is still stopping)
 * would start the same cells, fail on the first one the other holds, and leave a failure record in a cell that is
 * running. Refused before anything is written, naming the process. A file system that takes no locks runs unguarded
 * (each cell's run folder is still locked on its own).
 */
function lockExperiment(out: string): { release(): void } | undefined {
  const lock = lockRunDir(out);
  if ("heldBy" in lock)
    throw new HoneError("usage", heldMessage(out, lock.heldBy, "before running the experiment again (or choose another --out)"));
  return "failed" in lock ? undefined : lock;
}

async function runLocked(
  exp: Experiment,
  o: ExperimentRunOptions,
  g: { out: string; planned: PlannedCell[]; want: (c: PlannedCell) => CellSettings; log: (l: string) => void },
): Promise<ExperimentRunResult> {
  const { out, planned, want, log } = g;
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
  restartFailed(out, todo, want, log);
  refreshSeedMeasurements(out, todo, want, log);
  const known = recordStarts(out, todo, want);
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
      const recorded = known.has(cell.dir) ? want(cell) : undefined;
      const r = await runCell(exp, cell, { out, queue: o.queue, slurm: o.slurm, onEvent, settings: recorded });
      done++;
      const score = r.final.tasks.map((t) => (t.score === null ? "-" : t.score.toPrecision(4))).join(" ");
      log(`done   ${cell.dir} (${done}/${todo.length}): test ${score}, ${r.cost[exp.budget.unit]} ${exp.budget.unit}`);
    } catch (err) {
      // The message can carry a method program's or a harness's own text (its stderr): shown, never obeyed.
      log(`failed ${cell.dir}: ${oneLine((err as Error).message.split("\n")[0] ?? "")}`);
      recordFailure(failure, err, exp, o);
      throw err;
    }
  });
  return { out, planned: planned.length, skipped: planned.length - todo.length, ran: todo.length };
}
