// What one cell × seed of a grid runs: the optimize settings of its search, built from the experiment file.
import { configError } from "../errors.ts";
import type { SlurmSettings } from "../loop/distributed/slurm-script.ts";
import type { OptimizeSettings } from "../loop/optimize.ts";
import { optimizeConfigSchema, settingsFromConfig } from "../loop/optimize-config.ts";
import { methodByName } from "../method/registry.ts";
import { resolveTask } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { qaFixedCalls } from "./budget.ts";
import type { Experiment } from "./experiment.ts";
import type { PlannedCell } from "./plan.ts";

export type TaskGroup = Experiment["tasks"][number];
export type MethodEntry = Experiment["methods"][number];

export interface CellSetup {
  group: TaskGroup;
  method: MethodEntry;
  /** The one task the method searches on (the group's train split). */
  train: DiscoveryTask;
  /** What hone measures once at the end (the group's test split; its train split when it has none). */
  test: DiscoveryTask[];
  settings: OptimizeSettings;
}

export interface RunOptions {
  /** Rollouts on BullMQ workers through this Redis URL (hone worker), the search's and the test split's. */
  queue?: string;
  /** A discovery cell's rollouts as sbatch jobs, the search's and the test split's (QA rows cannot use Slurm). */
  slurm?: SlurmSettings;
}

const labelOf = (m: MethodEntry) => m.name ?? m.method;

/**
 * A method's parameters for a cell: as the file gives them, and a method whose own parameters take `proposals`
 * (greedy) gets the cell's K unless the file sets it, so its rounds have the shape the budget was planned for.
 */
function paramsWithK(m: MethodEntry, k: number): Record<string, unknown> {
  if ("proposals" in m.params) return m.params;
  const withK = { ...m.params, proposals: k };
  return methodByName(m.method).params.safeParse(withK).success ? withK : m.params;
}

/** The cell's method and harness entries of the file. */
export function cellEntries(exp: Experiment, cell: PlannedCell) {
  const method = exp.methods.find((m) => labelOf(m) === cell.method) as MethodEntry;
  const harness = exp.harnesses.find((h) => h.name === cell.harness) as Experiment["harnesses"][number];
  return { method, harness };
}

/** What every cell's search shares, as `hone optimize --config` fields: models, method, K, concurrency, seed. */
export function searchConfig(exp: Experiment, cell: PlannedCell) {
  const { method, harness } = cellEntries(exp, cell);
  const k = method.proposals ?? exp.search.proposals;
  return {
    seed_harness: harness.path,
    executor: exp.executor,
    proposer: exp.proposer,
    rounds: 1,
    proposals: k,
    method: method.method,
    method_params: paramsWithK(method, k),
    concurrency: exp.search.concurrency,
    noise_repeats: exp.search.noise_repeats,
    seed: cell.seed,
  };
}

/** Resolves a discovery cell's group, method, tasks and search settings; what cannot run is an error naming the field. */
export async function cellSetup(exp: Experiment, cell: PlannedCell, o: RunOptions = {}): Promise<CellSetup> {
  const gi = exp.tasks.findIndex((t) => t.name === cell.benchmark);
  const group = exp.tasks[gi] as TaskGroup;
  const { method } = cellEntries(exp, cell);
  const trainRef = group.splits.train[0] as string;
  const train = await resolveTask(trainRef, group.tasks_dir);
  const test = await Promise.all((group.splits.test ?? group.splits.train).map((r) => resolveTask(r, group.tasks_dir)));
  for (const [j, t] of test.entries())
    if (t.metric !== train.metric || t.direction !== train.direction)
      throw configError(
        exp.file,
        `tasks.${gi}.splits.test.${j}`,
        `${t.id} scores ${t.metric} (${t.direction}) but ${train.id} scores ${train.metric} (${train.direction}); a group's tasks share one metric and direction`,
      );
  const config = optimizeConfigSchema.parse({
    ...searchConfig(exp, cell),
    task: trainRef,
    tasks_dir: group.tasks_dir,
    max_evals: exp.search.max_evals,
    paired: exp.search.paired,
  });
  const settings = settingsFromConfig(config, train.budget.maxEvals);
  if (o.queue) settings.queue = o.queue;
  if (o.slurm) settings.slurm = o.slurm;
  return { group, method, train, test, settings };
}

/**
 * What this build cannot run, checked before anything is written: discovery groups that are not one task to search on,
 * QA rows whose train and validation limits alone take more evaluator calls than the budget (a row without limits
 * is checked against its splits' sizes when its cell starts: qa-cell.ts), and QA rows asked to run on Slurm.
 */
export function runnableProblems(exp: Experiment, o: RunOptions = {}): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  if (o.slurm && exp.benchmarks.length > 0)
    out.push({
      field: "benchmarks",
      message:
        "--runner slurm runs discovery tasks' rollouts as sbatch jobs; a QA row's questions run locally or on BullMQ workers (--queue): run the benchmarks in a file of their own",
    });
  exp.benchmarks.forEach((b, i) => {
    const train = b.splits.train.limit;
    const validation = b.splits.validation?.limit;
    if (exp.budget.unit !== "evaluator_calls" || train === undefined || validation === undefined) return;
    const fixed = qaFixedCalls(train, validation);
    if (exp.budget.size < fixed)
      out.push({
        field: "budget.size",
        message: `benchmarks.${i} (${b.benchmark}): the seed harness on ${train} train questions and the final choice on ${validation} validation questions take ${fixed} evaluator calls, more than the budget's ${exp.budget.size}; raise budget.size or lower the limits`,
      });
  });
  exp.tasks.forEach((t, i) => {
    if (t.splits.train.length !== 1)
      out.push({
        field: `tasks.${i}.splits.train`,
        message: `optimize searches on one discovery task; give one train task (the test split may hold several)`,
      });
    if (t.splits.validation)
      out.push({
        field: `tasks.${i}.splits.validation`,
        message: "a discovery group has no validation split here: the method sees its train task's rollouts only",
      });
  });
  return out;
}
