import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HoneError } from "../../errors.ts";
import { contentHash } from "../../harness/files.ts";
import type { ModelSettings } from "../../model/resolve.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import type { RolloutJob, RolloutJobResult, Runner } from "../runner.ts";
import { toJobData } from "./job-data.ts";
import { cancelSlurmJobs, FORGOTTEN, mapSlurmState, slurmCommand, slurmStates } from "./slurm-commands.ts";
import { checkSlurmRun, jobScript, type SlurmSettings } from "./slurm-script.ts";

const HONE_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "bin", "hone.js");

/** sbatch calls at once: the controller answers them one by one, and a burst of them only queues there. */
const SUBMIT_AT_ONCE = 4;

/** Beside a job's script, the id Slurm gave it: a resumed run finds the job there and waits for it again. */
const ID_FILE = "slurm-job-id";

export interface SlurmRunnerOptions extends SlurmSettings {
  runDir: string;
  task: DiscoveryTask;
  taskRef: string;
  tasksDir?: string;
  executor: Partial<ModelSettings> & { model: string };
  timeLimitSec?: number;
  pollMs?: number;
}

/** Runs `each` over `items`, at most `atOnce` at a time; every call settles before the first error is thrown. */
async function eachAtMost<T>(items: T[], atOnce: number, each: (item: T) => Promise<void>): Promise<void> {
  const errors: unknown[] = [];
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++] as T).catch((err) => errors.push(err));
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, lane));
  if (errors.length > 0) throw errors[0];
}

/** The last lines of a job's log, read from its last 4 KB however much the job wrote. */
function logTail(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return "";
  }
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, 4096));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    return buf.toString("utf8").trim().split("\n").slice(-3).join(" | ");
  } finally {
    closeSync(fd);
  }
}

/**
 * Each rollout an sbatch job on a shared filesystem: the job description and script go under the run directory's
 * slurm/ folder, the job runs `hone rollout-job` and writes the rollout straight into the run directory.
 * Cancelled, timed-out or failed jobs are failed measurements with their Slurm state, never scores. A job that an
 * earlier coordinator of the run submitted and that still runs (the run was stopped, then resumed) is waited for
 * again, never submitted twice: two jobs would write the same rollout's folder.
 */
export class SlurmRunner implements Runner {
  private readonly taskHash: string;
  private readonly template: string;

  constructor(private readonly o: SlurmRunnerOptions) {
    this.template = checkSlurmRun(o, o.runDir);
    this.taskHash = contentHash(o.task.dir);
  }

  private jobDir(job: RolloutJob): string {
    return join(this.o.runDir, "slurm", job.id);
  }

  /** The job's description, as its job.json holds it (what `hone rollout-job` runs). */
  jobData(job: RolloutJob): string {
    return JSON.stringify(
      toJobData(job, {
        runKey: this.o.runDir,
        taskRef: this.o.taskRef,
        tasksDir: this.o.tasksDir,
        taskHash: this.taskHash,
        executor: this.o.executor,
        timeLimitSec: this.o.timeLimitSec,
      }),
    );
  }

  /** The Slurm job an earlier coordinator submitted for this very job (same description), if any. */
  private earlier(job: RolloutJob): { id: string; same: boolean } | undefined {
    try {
      const id = readFileSync(join(this.jobDir(job), ID_FILE), "utf8").trim();
      if (!/^\d+$/.test(id)) return undefined;
      return { id, same: readFileSync(join(this.jobDir(job), "job.json"), "utf8") === this.jobData(job) };
    } catch {
      return undefined;
    }
  }

  private async submit(job: RolloutJob): Promise<string> {
    const dir = this.jobDir(job);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "job.json"), this.jobData(job));
    const script = jobScript(this.template, this.o, {
      name: `hone-${job.id}`,
      output: join(dir, "slurm.out"),
      argv: [process.execPath, HONE_BIN, "rollout-job", join(dir, "job.json"), "--out", job.outDir],
    });
    writeFileSync(join(dir, "job.sh"), script);
    let id: string;
    try {
      id = (await slurmCommand("sbatch", ["--parsable", join(dir, "job.sh")])).split(";")[0] as string;
    } catch (err) {
      throw new HoneError("runFailed", `sbatch refused ${join(dir, "job.sh")}: ${(err as Error).message}`);
    }
    writeFileSync(join(dir, ID_FILE), `${id}\n`);
    return id;
  }

  /**
   * The Slurm job of each rollout by id, in the jobs' order: an earlier coordinator's still running for the same job,
   * else a new one. An earlier job for a different description is cancelled first. A refused submission fails the
   * run once the submissions under way are through (their ids written, for a resumed run to find).
   */
  private async start(jobs: RolloutJob[]): Promise<Map<string, RolloutJob>> {
    const found = new Map(jobs.map((job) => [job, this.earlier(job)] as const));
    const states = await slurmStates([...found.values()].flatMap((e) => (e ? [e.id] : [])));
    const still = (id: string) => mapSlurmState(states.get(id) ?? "GONE") === "active";
    const ids = new Map<RolloutJob, string>();
    const stale: string[] = [];
    for (const [job, e] of found) {
      if (e && still(e.id) && e.same) ids.set(job, e.id);
      else if (e && still(e.id)) stale.push(e.id);
    }
    await cancelSlurmJobs(stale);
    await eachAtMost(
      jobs.filter((job) => !ids.has(job)),
      SUBMIT_AT_ONCE,
      async (job) => void ids.set(job, await this.submit(job)),
    );
    return new Map(jobs.map((job) => [ids.get(job) as string, job]));
  }

  async *run(jobs: RolloutJob[]): AsyncIterable<RolloutJobResult> {
    const active = await this.start(jobs);
    while (active.size > 0) {
      await new Promise((r) => setTimeout(r, this.o.pollMs ?? 1000));
      const states = await slurmStates([...active.keys()]);
      for (const [id, job] of [...active]) {
        const state = states.get(id);
        if (state === undefined || mapSlurmState(state) === "active") continue;
        active.delete(id);
        yield this.ended(id, job, state);
      }
    }
  }

  /** A job's end: its rollout when it finished (its folder appears whole at its end), else why not. */
  private ended(id: string, job: RolloutJob, state: string): RolloutJobResult {
    const finished = existsSync(join(job.outDir, "result.json"));
    if (finished && (mapSlurmState(state) === "completed" || state === FORGOTTEN)) return { id: job.id };
    const tail = logTail(join(this.jobDir(job), "slurm.out"));
    const how =
      state === FORGOTTEN
        ? "is no longer known to Slurm (its controller forgot it, and there is no accounting) and left no result"
        : `ended ${state}`;
    return { id: job.id, error: `Slurm job ${id} ${how}${tail ? `: ${tail}` : ""}` };
  }

  async close(): Promise<void> {}
}
