// One cell × seed of a grid, start to finish: the method's search (an ordinary optimize run in the cell's folder), then
// hone's measurement of the method's final choice and of the seed harness on the test split, then cell.json. A cell
// whose cell.json is there is finished and never run again; every step before it resumes from what it left.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { contentHash } from "../harness/files.ts";
import type { OptimizeEvent, OptimizeSettings } from "../loop/optimize.ts";
import { HONE_VERSION } from "../measure/identity.ts";
import { writeJsonAtomic } from "../store/atomic.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { CellIdentity, CellRecord, ChoiceResult } from "./cell.ts";
import { cellSetup, type RunOptions } from "./cell-settings.ts";
import type { Experiment } from "./experiment.ts";
import { measureOnTest } from "./measure-test.ts";
import { type PlannedCell, seedDir } from "./plan.ts";
import { CELL_FILE } from "./read-cells.ts";
import { runSearch } from "./search.ts";

export interface CellRunOptions extends RunOptions {
  /** The experiment's out folder. */
  out: string;
  onEvent?: (cell: PlannedCell, e: OptimizeEvent) => void;
}

/** The cell's record if it is finished (its cell.json is written last, atomically). */
export const isFinished = (out: string, cell: PlannedCell) => existsSync(join(out, cell.dir, CELL_FILE));

const endpointOf = (m: OptimizeSettings["executor"]) => ({
  endpoint: m.model === "offline" ? "offline" : (m.baseUrl ?? ""),
  model: m.model,
  dialect: m.dialect ?? "vllm",
});

/** The test split's task set as one component: its ids, and one hash over every task's folder (evaluator included). */
function taskSet(tasks: readonly DiscoveryTask[], group: string) {
  const hashes = tasks.map((t) => `${t.id}:${contentHash(t.dir)}`).join("\n");
  const content = createHash("sha256").update(hashes).digest("hex").slice(0, 32);
  const first = tasks[0] as DiscoveryTask;
  return { id: `${group}/test[${tasks.map((t) => t.id).join(",")}]`, content, metric: first.metric, direction: first.direction };
}

function identityOf(exp: Experiment, s: OptimizeSettings, test: readonly DiscoveryTask[], group: string, seedHash: string) {
  const set = taskSet(test, group);
  const first = test[0] as DiscoveryTask;
  const id: CellIdentity = {
    measurement: {
      task: set,
      executor: endpointOf(s.executor),
      // A harness's sampling is its own (covered by its content hash); the grid sets none of its own.
      sampling: {},
      budget: { maxEvals: s.maxEvals, timeoutSec: first.timeoutSec },
      harness: seedHash,
      hone: HONE_VERSION,
    },
    proposer: endpointOf(s.proposer),
    split: "test",
    scorer: `evaluator.py of each task (task set content ${set.content})`,
    repeats: exp.repeats,
    budget: { unit: exp.budget.unit, size: exp.budget.size },
  };
  return id;
}

/** Where the seed harness's test measurements go: hidden, so the report does not take it for a cell. */
export const SEED_FOLDER = ".seed-harness";

// Cells running at once that share a seed measurement wait for the one making it.
const making = new Map<string, Promise<ChoiceResult>>();
function once(key: string, make: () => Promise<ChoiceResult>): Promise<ChoiceResult> {
  let p = making.get(key);
  if (!p) {
    p = make().finally(() => making.delete(key));
    making.set(key, p);
  }
  return p;
}

/** The seed harness's candidate id in an optimize run. */
const SEED_CANDIDATE = "r00-seed";

/** The candidate optimize left in `<run>/best/` (its id from meta.json). */
function finalCandidate(runDir: string): string {
  const meta = JSON.parse(readFileSync(join(runDir, "best", "meta.json"), "utf8")) as { candidate?: string };
  return meta.candidate ?? SEED_CANDIDATE;
}

/** Runs (or resumes) one cell × seed and writes its cell.json; returns the record. */
export async function runCell(exp: Experiment, cell: PlannedCell, o: CellRunOptions): Promise<CellRecord> {
  const setup = await cellSetup(exp, cell, o);
  const dir = join(o.out, cell.dir);
  const { spend } = await runSearch({
    dir,
    settings: setup.settings,
    budget: exp.budget,
    direction: setup.train.direction,
    onEvent: o.onEvent && ((e) => o.onEvent?.(cell, e)),
  });
  const s = setup.settings;
  const run = { ...s.executor, maxEvals: s.maxEvals, tasksDir: s.tasksDir, warmPool: s.warmPool };
  const common = { tasks: setup.test, repeats: exp.repeats, seed: cell.seed, run };
  const harness = exp.harnesses.find((h) => h.name === cell.harness)?.path as string;
  // The seed harness at this seed is one measurement shared by every method's cell (the same harness, tasks and seeds).
  const shared = join(o.out, SEED_FOLDER, `${cell.benchmark}+${cell.harness}`, seedDir(cell.seed));
  const seedHarness = await once(shared, () => measureOnTest({ ...common, harness, candidate: "seed", dir: shared }));
  // A method that kept the seed harness chose what was just measured: the same candidate, the same seeds.
  const chosen = finalCandidate(dir);
  const final =
    chosen === SEED_CANDIDATE
      ? { ...seedHarness, candidate: chosen }
      : await measureOnTest({ ...common, harness: join(dir, "best"), candidate: chosen, dir: join(dir, "test", "final") });
  const record: CellRecord = {
    format: "hone-cell/1",
    benchmark: cell.benchmark,
    harness: cell.harness,
    method: cell.method,
    seed: cell.seed,
    identity: identityOf(exp, s, setup.test, setup.group.name, seedHarness.harness),
    test_seen_by_method: cell.test_seen_by_method,
    final,
    seed_harness: seedHarness,
    curve: { split: "train", points: spend.curve },
    method_reported: [],
    cost: spend.cost,
    finished: new Date().toISOString(),
  };
  writeJsonAtomic(join(dir, CELL_FILE), record);
  return record;
}
