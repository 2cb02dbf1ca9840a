// `hone replay`: re-runs a finished run of any kind from its own records (model calls and evaluations, by content
// and occurrence), with no endpoint, into a new folder, and compares the two runs' records field by field.
// Each run kind's modules load only for a replay of that kind.
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { HoneError, zodIssues } from "../errors.ts";
import { isHarnessFolder } from "../harness/program.ts";
import { type IdentityParts, identityDifferences } from "../measure/identity.ts";
import { type Db, hasTable, openDb, type RunRow, runRow } from "../store/db.ts";
import { callTokens, recordedHoneVersion } from "../store/receipts.ts";
import { compareRecords } from "./compare-runs.ts";
import type { EvalConfig } from "./eval.ts";
import { refuseOtherVersion } from "./hone-version.ts";
import { type OptimizeEvent, type OptimizeSettings, optimize } from "./optimize.ts";
import { recordedSettings } from "./optimize-config.ts";
import { keptSeedDir } from "./optimize-rounds.ts";
import type { RunConfig } from "./run.ts";
import { freeDir, refuseNonEmpty } from "./run-dir.ts";
import { removeUnused } from "./run-writer.ts";
import { trainConfigSchema } from "./train-config-schema.ts";

export interface ReplayResult {
  kind: RunRow["kind"];
  source: string;
  replay: string;
  seconds: number;
  counts: Record<string, number>;
  differences: string[];
}

const replayCache = { mode: "replay" as const };

/** Called as a replay's folder is made, then held by its writer, with what removes it and all written there (on a stop). */
export type OnHeld = (dir: string, abandon: () => void) => void;

async function replayTrain(dir: string, out: string, onHeld?: OnHeld): Promise<void> {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  const epochs = (db.prepare("SELECT MAX(round) AS n FROM rounds").get() as { n: number | null }).n ?? 0;
  db.close();
  const { openTrainRun } = await import("./train-setup.ts");
  const run = await openTrainRun({ out, replayOf: dir, onHeld });
  try {
    for await (const loss of run.trainer.epochs(epochs)) {
      loss.backward();
      run.optimizer.step();
    }
  } finally {
    await run.close();
  }
}

/**
 * Replays the finished run in `dirArg` into `outArg` (a new folder; default the first free `<run-dir>-replay[-N]`) and
 * compares their records. `onHeld` gets what removes the replay's folder while the replay goes (a replay has nothing
 * worth keeping until it has finished): first the folder made for the name, then, once the run kind's writer holds the
 * folder, with all it wrote; each call replaces the one before.
 */
export async function replayRun(
  dirArg: string,
  outArg?: string,
  onEvent?: (e: OptimizeEvent) => void,
  onHeld?: OnHeld,
): Promise<ReplayResult> {
  const dir = resolve(dirArg);
  if (!existsSync(join(dir, "hone.db"))) throw new HoneError("usage", `${dir} is not a run directory (no hone.db)`);
  const { row, hone } = readRun(join(dir, "hone.db"));
  if (!row) throw new HoneError("usage", `${dir} holds no run`);
  if (row.status !== "finished") throw new HoneError("usage", unfinished(dir, dirArg, row.kind));
  refuseOtherVersion(dir, "replay", hone);
  if (outArg) refuseNonEmpty(resolve(outArg), "a replay needs a new folder: choose another --out");
  // Without --out, the name is taken by making the folder: two replays of one run started together get one each.
  const out = outArg ? resolve(outArg) : freeDir(`${dir}-replay`, madeHere);
  // Until its writer holds it, the folder made here for the name is what a stop removes.
  if (!outArg) onHeld?.(out, () => removeUnused(out));
  const started = performance.now();
  // The writer removes what it wrote (a folder it made itself with it); the folder made here for the name goes after.
  const held: OnHeld | undefined =
    onHeld &&
    ((d, abandon) =>
      onHeld(d, () => {
        try {
          abandon();
        } finally {
          if (!outArg) removeUnused(out);
        }
      }));
  try {
    await replayInto(row, dir, out, onEvent, held);
  } catch (err) {
    // A replay that left nothing in the folder it made (one that could not begin) leaves no folder either; what the
    // replay failed with is what the user is told, whatever the removal meets.
    if (!outArg)
      try {
        removeUnused(out);
      } catch {
        // left as it is: an empty folder, which the next replay passes by
      }
    throw err;
  }
  const seconds = (performance.now() - started) / 1000;
  const a = openDb(join(dir, "hone.db"), { readonly: true });
  const b = openDb(join(out, "hone.db"), { readonly: true });
  try {
    const compared = compareRecords(a, b);
    const calls = callChanges(a, b);
    return {
      kind: row.kind,
      source: dir,
      replay: out,
      seconds,
      counts: { ...compared.counts, model_calls: calls.count },
      differences: [...identityChanges(a, b), ...compared.differences, ...calls.differences, ...summaryChanges(a, b)],
    };
  } finally {
    a.close();
    b.close();
  }
}

/**
 * What differs in the measurement identities of the recorded run's rollouts and the replay's (the hone version that
 * made them, the task's content, the executor…), named once per component with the rollouts it concerns: the records
 * compare only each identity's digest, which says that something differs but not what.
 */
function identityChanges(a: Db, b: Db): string[] {
  const read = (db: Db) =>
    hasTable(db, "rollouts")
      ? new Map(
          (db.prepare("SELECT id, identity FROM rollouts").all() as { id: string; identity: string | null }[]).map((r) => [
            r.id,
            r.identity,
          ]),
        )
      : new Map<string, string | null>();
  const before = read(a);
  const after = read(b);
  const where = new Map<string, string[]>();
  for (const [id, x] of before) {
    const y = after.get(id);
    if (!x || !y || x === y) continue;
    let diffs: string[];
    try {
      diffs = identityDifferences(JSON.parse(x) as IdentityParts, JSON.parse(y) as IdentityParts);
    } catch {
      diffs = ["the recorded identity is not readable JSON"];
    }
    for (const d of diffs) where.set(d, [...(where.get(d) ?? []), id]);
  }
  return [...where].map(([d, ids]) => {
    const named = ids.slice(0, 3).join(", ") + (ids.length > 3 ? ` and ${ids.length - 3} more` : "");
    return `identity: ${d.slice(0, 200)} (recorded ≠ replayed; rollout${ids.length > 1 ? "s" : ""} ${named})`;
  });
}

/**
 * What differs in the two runs' summaries (what `hone receipt` and `hone log` print as the run's result), field by
 * field; `outDir`, where an eval wrote its files, is the replay's own folder.
 */
function summaryChanges(a: Db, b: Db): string[] {
  const read = (db: Db): Record<string, unknown> => {
    try {
      const v = JSON.parse(runRow(db)?.summary ?? "null") as unknown;
      return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { summary: v };
    } catch {
      return { summary: "(not readable JSON)" };
    }
  };
  const x = read(a);
  const y = read(b);
  const differences: string[] = [];
  for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
    if (k === "outDir") continue;
    const before = JSON.stringify(x[k]);
    const after = JSON.stringify(y[k]);
    if (before !== after) differences.push(`summary.${k}: ${before?.slice(0, 80)} ≠ ${after?.slice(0, 80)}`);
  }
  return differences;
}

/** One group of model calls: a role's calls in a rollout or QA job, or in a round (a proposer's). */
type CallGroup = { calls: number; prompt: number; completion: number; tokens: string };

/** Each group's calls, by `role rollout round`, with their token counts (sorted: calls made at once land in any order). */
function callGroups(db: Db): Map<string, CallGroup> {
  const out = new Map<string, CallGroup>();
  const pairs = new Map<string, string[]>();
  for (const r of callTokens(db)) {
    const name = `${r.role} calls${r.rollout_id ? ` of ${r.rollout_id}` : ""}${r.round === null ? "" : ` in round ${r.round}`}`;
    const g = out.get(name) ?? { calls: 0, prompt: 0, completion: 0, tokens: "" };
    g.calls++;
    g.prompt += r.prompt_tokens ?? 0;
    g.completion += r.completion_tokens ?? 0;
    out.set(name, g);
    const list = pairs.get(name) ?? [];
    list.push(`${r.prompt_tokens}/${r.completion_tokens}`);
    pairs.set(name, list);
  }
  for (const [name, g] of out) g.tokens = (pairs.get(name) ?? []).sort().join(",");
  return out;
}

/**
 * What differs in the model calls the two runs made (the receipt's calls and tokens): per role and rollout, job or
 * round, the number of calls and each call's prompt and completion tokens. Latency, attempts, faults and cache hits
 * are left out: a replay's calls are all served from the records, at no latency.
 */
function callChanges(a: Db, b: Db): { count: number; differences: string[] } {
  const before = callGroups(a);
  const after = callGroups(b);
  const says = (g: CallGroup | undefined) =>
    g ? `${g.calls} call${g.calls === 1 ? "" : "s"}, ${g.prompt} prompt + ${g.completion} completion tokens` : "no calls";
  const differences: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const x = before.get(name);
    const y = after.get(name);
    if (x?.tokens === y?.tokens && x?.calls === y?.calls) continue;
    const same = x && y && x.calls === y.calls && x.prompt === y.prompt && x.completion === y.completion;
    differences.push(
      `model_calls: ${name}: ${says(x)} ≠ ${says(y)}${same ? " (the same totals over other calls)" : ""}`.slice(0, 300),
    );
  }
  return { count: [...before.values()].reduce((n, g) => n + g.calls, 0), differences };
}

/**
 * The run recorded in the hone.db at `path`, read only after SQLite has checked the whole file: a file that is not a
 * database (a link to /dev/zero, a FIFO), or one truncated or damaged, is refused naming it, before anything runs.
 */
function readRun(path: string): { row: RunRow | undefined; hone: string | null } {
  const refuse = (why: string) => new HoneError("usage", `${path}: ${why}; the recording is damaged and cannot be replayed`);
  if (!statSync(path).isFile()) throw refuse("is not a file");
  try {
    const db = openDb(path, { readonly: true });
    try {
      const check = db.pragma("quick_check", { simple: true });
      if (check !== "ok") throw refuse(`is not a sound database (SQLite's check: ${String(check).slice(0, 120)})`);
      return { row: runRow(db), hone: recordedHoneVersion(db) };
    } finally {
      db.close();
    }
  } catch (err) {
    if (err instanceof HoneError) throw err;
    throw refuse(`is not a readable hone run database (${(err as Error).message.slice(0, 120)})`);
  }
}

/** Why a run that has not finished is not replayed, and what to do: a resume where its kind has one. */
function unfinished(dir: string, dirArg: string, kind: RunRow["kind"]): string {
  if (kind === "optimize" || kind === "train")
    return `${dir} has not finished; resume it first (hone ${kind} --resume ${dirArg})`;
  return `${dir} has not finished (it was stopped or failed before its end), and hone ${kind} does not resume: run it again to replay it`;
}

/** Runs the replay of the run `row` in `dir` into the folder `out`, as its kind runs. */
async function replayInto(
  row: RunRow,
  dir: string,
  out: string,
  onEvent?: (e: OptimizeEvent) => void,
  onHeld?: OnHeld,
): Promise<void> {
  const config = recordedConfig(row, dir);
  if (row.kind === "optimize") {
    // The seed harness as the run kept it (its candidate r00-seed), not the folder it was started from, which may
    // have changed or gone since.
    const recorded = recordedSettings(config);
    const own = keptSeedDir(dir);
    const seedHarness = isHarnessFolder(own) ? own : recorded.seedHarness;
    // A run may have finished before its last round: `hone compare` stops a cell's run when its budget is spent. The
    // replay stops where the run did, never asking for a round that was not recorded, and goes on to every round it
    // recorded, whatever its settings say.
    const rounds = recordedRounds(dir);
    const settings: OptimizeSettings = {
      ...recorded,
      rounds: Math.max(recorded.rounds, rounds),
      seedHarness,
      cache: replayCache,
      replayOf: dir,
    };
    await optimize(settings, { outDir: out, onEvent, onHeld, nextRound: (round) => round <= rounds });
  } else if (row.kind === "run") {
    const c = config as unknown as RunConfig;
    const { runHarness } = await import("./run.ts");
    await runHarness(join(dir, "harness"), c.task, { ...c, cache: replayCache, replayOf: dir, outDir: out, onPartial: onHeld });
  } else if (row.kind === "eval") {
    const c = config as unknown as EvalConfig;
    const { evaluateBenchmark } = await import("./eval.ts");
    await evaluateBenchmark({ ...c, harnessDir: join(dir, "harness"), cache: replayCache, replayOf: dir, outDir: out, onHeld });
  } else await replayTrain(dir, out, onHeld);
}

/** The last round an optimize run recorded (0 when only round 0 was). */
function recordedRounds(dir: string): number {
  const db = openDb(join(dir, "hone.db"), { readonly: true });
  try {
    return (db.prepare("SELECT MAX(round) AS n FROM rounds").get() as { n: number | null }).n ?? 0;
  } finally {
    db.close();
  }
}

/** The whole numbers a setting may take: at least `min`, at most `max`. */
const isWhole = (x: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
  typeof x === "number" && Number.isInteger(x) && x >= min && x <= max;

/**
 * The settings the run `row` in `dir` stored, checked as its kind reads them before anything runs: a run folder may
 * come from anyone, and settings it was never run with (a damaged file, 10⁹ samples a task) would crash the replay or
 * have it run for ever. A setting that differs but stays in bounds is replayed and reported where its records differ.
 */
function recordedConfig(row: RunRow, dir: string): Record<string, unknown> {
  const damaged = (what: string) =>
    new HoneError(
      "usage",
      `${join(dir, "hone.db")}: the run's settings ${what}; the recording is damaged and cannot be replayed`,
    );
  let config: unknown;
  try {
    config = JSON.parse(row.config);
  } catch {
    throw damaged("(runs.config) are not readable JSON");
  }
  if (typeof config !== "object" || config === null || Array.isArray(config)) throw damaged("(runs.config) are not an object");
  const c = config as Record<string, unknown>;
  if (row.kind === "train") {
    const r = trainConfigSchema.omit({ out: true, $schema: true }).safeParse(c);
    if (!r.success) {
      const first = zodIssues(r.error.issues)[0];
      throw damaged(`are not a train run's (${first?.field}: ${first?.message})`);
    }
    return c;
  }
  const text = (k: string) => {
    if (typeof c[k] !== "string") throw damaged(`have no ${k}`);
  };
  const whole = (k: string, min: number, max?: number) => {
    if (c[k] !== undefined && !isWhole(c[k], min, max))
      throw damaged(
        `have ${k} ${JSON.stringify(c[k])?.slice(0, 40)}, not a whole number from ${min}${max === undefined ? "" : ` to ${max}`}`,
      );
  };
  whole("seed", 0);
  whole("concurrency", 1, 4096);
  if (row.kind === "eval") {
    text("benchmark");
    text("split");
    whole("limit", 1);
    // Each sample of each task is a recorded task result: a replay never measures more than the run did.
    const db = openDb(join(dir, "hone.db"), { readonly: true });
    const rows = hasTable(db, "task_results")
      ? (db.prepare("SELECT COUNT(*) AS n FROM task_results").get() as { n: number }).n
      : 0;
    db.close();
    whole("samples", 1, Math.max(1, rows));
  } else if (row.kind === "run") text("task");
  return c;
}

/** Takes `d` as a replay's folder by making it: false where another process made it first. */
function madeHere(d: string): boolean {
  try {
    mkdirSync(d);
    return true;
  } catch (err) {
    const { code, message } = err as NodeJS.ErrnoException;
    if (code === "EEXIST") return false;
    throw new HoneError("usage", `${d}: the replay's folder cannot be made there (${code ?? message}); choose an --out`);
  }
}
