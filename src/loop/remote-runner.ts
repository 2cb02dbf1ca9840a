// The runners beyond this process, behind one door: BullMQ workers (--queue) or Slurm jobs (--runner slurm). Their
// modules (and bullmq's) load only when a run uses them.
import type { ModelSettings } from "../model/resolve.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
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
  tasksDir?: string;
  executor: Partial<ModelSettings> & { model: string };
  timeLimitSec?: number;
  /** The run's records, which take what each queued job shipped back before its folder appears (Slurm jobs write it). */
  recording: Pick<Recording, "import">;
}

/** The remote runner the settings ask for, or undefined when rollouts run in this process. */
export async function remoteRunner(o: RemoteRunnerOptions): Promise<Runner | undefined> {
  const common = { task: o.task, taskRef: o.task.dir, tasksDir: o.tasksDir, executor: o.executor, timeLimitSec: o.timeLimitSec };
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
