// What one cell × seed of a grid runs: the optimize settings of its search, built from the experiment file.
import { configError } from "../errors.ts";
import type { OptimizeSettings } from "../loop/optimize.ts";
import { optimizeConfigSchema, settingsFromConfig } from "../loop/optimize-config.ts";
import { methodByName } from "../method/registry.ts";
import { resolveTask } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
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

/** Resolves a cell's group, method, tasks and search settings; what cannot run is an error naming the field. */
export async function cellSetup(exp: Experiment, cell: PlannedCell, o: RunOptions = {}): Promise<CellSetup> {
  const gi = exp.tasks.findIndex((t) => t.name === cell.benchmark);
  const group = exp.tasks[gi] as TaskGroup;
  const method = exp.methods.find((m) => labelOf(m) === cell.method) as MethodEntry;
  const harness = exp.harnesses.find((h) => h.name === cell.harness) as Experiment["harnesses"][number];
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
  const k = method.proposals ?? exp.search.proposals;
  const config = optimizeConfigSchema.parse({
    task: trainRef,
    tasks_dir: group.tasks_dir,
    seed_harness: harness.path,
    executor: exp.executor,
    proposer: exp.proposer,
    rounds: 1,
    proposals: k,
    method: method.method,
    method_params: paramsWithK(method, k),
    max_evals: exp.search.max_evals,
    concurrency: exp.search.concurrency,
    paired: exp.search.paired,
    noise_repeats: exp.search.noise_repeats,
    seed: cell.seed,
  });
  const settings = settingsFromConfig(config, train.budget.maxEvals);
  if (o.queue) settings.queue = o.queue;
  return { group, method, train, test, settings };
}

/**
 * What this build cannot run, checked before anything is written: QA benchmarks (optimize searches on discovery tasks
 * only here) and discovery groups that are not one task to search on.
 */
export function runnableProblems(exp: Experiment): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  exp.benchmarks.forEach((b, i) => {
    out.push({
      field: `benchmarks.${i}`,
      message: `${b.benchmark}: a QA cell needs hone optimize to search on a QA benchmark (its benchmark settings), which this build of hone does not have yet; remove the benchmark, or report on finished cells with --report`,
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
