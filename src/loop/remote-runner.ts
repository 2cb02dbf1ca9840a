// The runners beyond this process, behind one door: BullMQ workers (--queue) or Slurm jobs (--runner slurm). Their
// modules (and bullmq's) load only when a run uses them.
import { resolve } from "node:path";
import type { ModelSettings } from "../model/resolve.ts";
import { BUILTIN_TASKS_DIR, builtinTaskIds } from "../task/builtin.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { detectLayout } from "../task/layouts.ts";
import { readRegistry } from "../task/registry.ts";
import type { SlurmSettings } from "./distributed/slurm-script.ts";
import type { Recording, ShippedRecords } from "./recording.ts";
import type { Runner } from "./runner.ts";

export interface RemoteSettings {
  /** Rollouts as BullMQ jobs through this Redis URL (hone worker runs them). */
  queue?: string;
  /** Rollouts as sbatch jobs on a shared filesystem. */
  slurm?: SlurmSettings;
}

export interface RemoteRunnerOptions extends RemoteSettings {
  /** Names the run's jobs: the same key finds the same finished jobs again (a restarted coordinator). */
  runKey: string;
  /** Where Slurm job scripts and logs go (`<runDir>/slurm/<job>/`). */
  runDir: string;
  /**
   * The folder that names the run's Slurm jobs, the same across restarts: `runDir` by default; a `hone run`'s --out,
   * whose build folder is named by its process.
   */
  slurmNamedBy?: string;
  task: DiscoveryTask;
  /** The task as the run names it (its recorded reference: an id, a folder, a phase's config file), if known. */
  taskRef?: string;
  tasksDir?: string;
  executor: Partial<ModelSettings> & { model: string };
  timeLimitSec?: number;
  /** The run's records, which take what each queued job shipped back before its folder appears (Slurm jobs write it). */
  recording: Pick<Recording, "import">;
}

/** Whether the folder loaded alone reads a config other than `task`'s (a later --phase, a named config file). */
function otherConfig(task: DiscoveryTask): boolean {
  if (!task.configPath) return false;
  try {
    return detectLayout(task.dir).configPath !== task.configPath;
  } catch {
    return true;
  }
}

/** Whether the tasks folder lists an entry of that id. */
function isEntry(id: string, tasksDir: string): boolean {
  try {
    return readRegistry(tasksDir).some((e) => e.id === id);
  } catch {
    return false;
  }
}

/** The built-in task whose folder `task` was loaded from, if one. */
const builtinId = (task: DiscoveryTask) => builtinTaskIds().find((id) => resolve(BUILTIN_TASKS_DIR, id) === resolve(task.dir));

/**
 * The task as a job names it, for a worker to resolve on its own machine, the same task as the coordinator's: a
 * built-in task by its id (each machine's hone has its own copy, wherever it is installed); an id the run was given
 * for a tasks.yaml entry by that id and the tasks folder it was found in (its entry's phase and settings with it); a
 * folder loaded with a config other than its default (a later --phase, a named config) by that config file, whose
 * settings and description the folder alone would not give; any other folder by its path (the same on every machine:
 * a shared filesystem).
 */
export function jobTaskRef(
  task: DiscoveryTask,
  given?: string,
  tasksDir = process.env.HONE_TASKS,
): { ref: string; tasksDir?: string } {
  const id = given !== undefined && !given.includes("/") && !given.startsWith(".") ? given : undefined;
  // An entry wins over a built-in task of its id, as resolveTask finds it (one may point at a built-in folder).
  if (id !== undefined && tasksDir !== undefined && isEntry(id, tasksDir)) return { ref: id, tasksDir };
  const builtin = otherConfig(task) ? undefined : builtinId(task);
  if (builtin) return { ref: builtin };
  if (id !== undefined) return { ref: id, tasksDir };
  return { ref: otherConfig(task) ? (task.configPath as string) : task.dir };
}

/** The remote runner the settings ask for, or undefined when rollouts run in this process. */
export async function remoteRunner(o: RemoteRunnerOptions): Promise<Runner | undefined> {
  const { ref: taskRef, tasksDir } = jobTaskRef(o.task, o.taskRef, o.tasksDir ?? process.env.HONE_TASKS);
  const common = { task: o.task, taskRef, tasksDir, executor: o.executor, timeLimitSec: o.timeLimitSec };
  if (o.queue) {
    const { BullmqRunner } = await import("./distributed/bullmq.ts");
    const importRecords = (records: ShippedRecords) => o.recording.import(records);
    return new BullmqRunner({ url: o.queue, runKey: o.runKey, ...common, importRecords });
  }
  if (o.slurm) {
    const { SlurmRunner } = await import("./distributed/slurm.ts");
    return new SlurmRunner({ ...o.slurm, runDir: o.runDir, namedBy: o.slurmNamedBy, ...common });
  }
  return undefined;
}
