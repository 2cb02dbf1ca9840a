import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { eachAtMost } from "../../at-most.ts";
import { HoneError } from "../../errors.ts";
import { DEFAULT_API_KEY_ENV } from "../../model/openai-compatible.ts";
import type { ModelSettings } from "../../model/resolve.ts";
import type { RolloutOutcome } from "../../runtime/rollout.ts";
import { taskContentHash } from "../../task/content-hash.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import type { RolloutJob, RolloutJobResult, Runner } from "../runner.ts";
import { outcomeFromFiles, toJobData } from "./job-data.ts";
import {
  cancelSlurmJobs,
  FORGOTTEN,
  heldBecause,
  mapSlurmState,
  namedJobs,
  slurmCommand,
  slurmStates,
} from "./slurm-commands.ts";
import { checkSlurmRun, jobScript, type SlurmSettings } from "./slurm-script.ts";

const HONE_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "bin", "hone.js");

/** sbatch calls at once: the controller answers them one by one, and a burst of them only queues there. */
const SUBMIT_AT_ONCE = 4;

/** How many times a run's start asks a controller that does not answer, a poll interval apart, before it gives up. */
const START_ATTEMPTS = 5;

/** Beside a job's script, the id Slurm gave it: the one to wait for, and what a user cancels a stopped run's jobs by. */
const ID_FILE = "slurm-job-id";

/** The longest wait between two polls of Slurm's queue. */
const MAX_POLL_MS = 15_000;

/**
 * The wait before the next poll of jobs submitted `elapsedMs` ago: a tenth of that, from `pollMs` up to 15 s. A
 * cluster's controller answers every user's squeue; polling it each second for jobs that run for minutes is what
 * its admins ask users not to do, and a job's end is then noticed within a tenth of its time at most.
 */
export const pollInterval = (pollMs: number, elapsedMs: number) => Math.min(MAX_POLL_MS, Math.max(pollMs, elapsedMs / 10));

export interface SlurmRunnerOptions extends SlurmSettings {
  runDir: string;
  task: DiscoveryTask;
  taskRef: string;
  tasksDir?: string;
  executor: Partial<ModelSettings> & { model: string };
  timeLimitSec?: number;
  pollMs?: number;
  /**
   * The folder that names the run's jobs (`runDir` by default): the same across restarts, so a restarted run finds
   * the jobs a killed one left (a `hone run`'s --out, whose build folder is named by its process).
   */
  namedBy?: string;
  /** Where the runner says what a user should know (a job Slurm holds); stderr by default. */
  say?: (text: string) => void;
}

/** A folder's path with its links followed (one run reached by two paths is one run), as given while it is not there. */
function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
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

/** A job's description as it is submitted: the data `hone rollout-job` reads, and the script sbatch runs. */
interface Described {
  json: string;
  script: string;
}

/**
 * Each rollout an sbatch job on a shared filesystem: the job description and script go under the run directory's
 * slurm/ folder, the job runs `hone rollout-job` and writes the rollout straight into the run directory.
 * Cancelled, timed-out or failed jobs are failed measurements with their Slurm state, never scores. Jobs are named
 * for the run and the rollout (`hone-<run tag>-<job>`), so a resumed run finds in Slurm's queue the jobs its stopped
 * coordinator left (also one whose sbatch answer never came back) and waits for them again instead of submitting a
 * second job that would write the same rollout's folder.
 */
export class SlurmRunner implements Runner {
  private readonly taskHash: string;
  private readonly template: string;
  /** Names this run's jobs apart from any other's in the queue: a digest of the folder that names them. */
  private readonly tag: string;
  /** The held jobs the run already said it waits on. */
  private readonly saidHeld = new Set<string>();
  private readonly pollMs: number;
  private readonly say: (text: string) => void;

  constructor(private readonly o: SlurmRunnerOptions) {
    this.template = checkSlurmRun(o, o.runDir);
    this.pollMs = o.pollMs ?? 1000;
    this.say = o.say ?? ((text) => process.stderr.write(`hone: ${text}\n`));
    // The task's hash as its records and a job's worker take it (its python_path, a tasks.yaml entry's overrides, what
    // its links read), not its folder's files alone: with those, every job was refused as "a different task".
    this.taskHash = taskContentHash(o.task);
    this.tag = createHash("sha256")
      .update(realDir(o.namedBy ?? o.runDir))
      .digest("hex")
      .slice(0, 10);
  }

  private jobDir(job: RolloutJob): string {
    return join(this.o.runDir, "slurm", job.id);
  }

  /** The job's name in Slurm's queue: the run's tag and the rollout's id. */
  jobName(job: RolloutJob): string {
    return `hone-${this.tag}-${job.id}`;
  }

  /** The job's description: its data (job.json, what `hone rollout-job` runs) and its script (job.sh). */
  describe(job: RolloutJob): Described {
    const dir = this.jobDir(job);
    const data = toJobData(job, {
      runKey: this.o.runDir,
      taskRef: this.o.taskRef,
      tasksDir: this.o.tasksDir,
      taskHash: this.taskHash,
      executor: this.o.executor,
      timeLimitSec: this.o.timeLimitSec,
    });
    const script = jobScript(this.template, this.carrying(), {
      name: this.jobName(job),
      output: join(dir, "slurm.out"),
      argv: [process.execPath, HONE_BIN, "rollout-job", join(dir, "job.json"), "--out", job.outDir],
    });
    return { json: JSON.stringify(data), script };
  }

  /**
   * The settings with the executor's API key variable among the environment to carry: a job's --export names the
   * variables it gets, and the model a rollout calls reads its key from the job's environment (as a local rollout
   * reads it from the run's). Only for an endpoint (the offline model takes no key), only a variable's name.
   */
  private carrying(): SlurmSettings {
    const { executor } = this.o;
    if (!executor.baseUrl) return this.o;
    const key = executor.apiKeyEnv ?? DEFAULT_API_KEY_ENV;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) || this.o.env?.includes(key)) return this.o;
    return { ...this.o, env: [...(this.o.env ?? []), key] };
  }

  /** Whether the job in Slurm under this job's name was submitted with this very description (settings included). */
  private sameOnDisk(job: RolloutJob, d: Described): boolean {
    const read = (name: string) => readFileSync(join(this.jobDir(job), name), "utf8");
    try {
      return read("job.json") === d.json && read("job.sh") === d.script;
    } catch {
      return false;
    }
  }

  private async submit(job: RolloutJob, d: Described): Promise<string> {
    const dir = this.jobDir(job);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "job.json"), d.json);
    writeFileSync(join(dir, "job.sh"), d.script);
    let out: string;
    try {
      // The name on the command line too (it overrides the script's): a template may name its jobs otherwise, and a
      // resumed run finds its jobs by this name.
      out = await slurmCommand("sbatch", ["--parsable", `--job-name=${this.jobName(job)}`, join(dir, "job.sh")]);
    } catch (err) {
      throw new HoneError("runFailed", `sbatch refused ${join(dir, "job.sh")}: ${(err as Error).message}`);
    }
    // --parsable prints "<id>" or "<id>;<cluster>"; a site's wrapper may print lines before it.
    const id = /^(\d+)(;\S*)?$/.exec(out.split("\n").at(-1)?.trim() ?? "")?.[1];
    if (!id)
      throw new HoneError("runFailed", `sbatch ${join(dir, "job.sh")} printed no job id: ${JSON.stringify(out.slice(0, 300))}`);
    writeFileSync(join(dir, ID_FILE), `${id}\n`);
    return id;
  }

  /** This run's jobs Slurm may still run, by name; a controller that does not answer is asked again, then refused. */
  private async queued(): Promise<Map<string, string[]>> {
    for (let attempt = 1; ; attempt++) {
      try {
        const byName = new Map<string, string[]>();
        for (const j of await namedJobs(`hone-${this.tag}-`))
          if (mapSlurmState(j.state) === "active") byName.set(j.name, [...(byName.get(j.name) ?? []), j.id]);
        return byName;
      } catch (err) {
        if (attempt >= START_ATTEMPTS)
          throw new HoneError(
            "runFailed",
            `Slurm did not answer for this run's jobs (${(err as Error).message}); nothing was submitted: resume the run once it answers`,
          );
        await new Promise((r) => setTimeout(r, this.pollMs));
      }
    }
  }

  /**
   * The Slurm job of each rollout by id, in the jobs' order: one of this run's that Slurm may still run, submitted with
   * the same description (its recorded id first), else a new one. Any other job of its name still in Slurm is
   * cancelled, and gone, before anything is submitted. A refused submission stops further ones and fails the run once
   * those under way are through (their ids written; a resumed run submits the rest).
   */
  private async start(jobs: RolloutJob[]): Promise<Map<string, RolloutJob>> {
    const queued = await this.queued();
    const described = new Map(jobs.map((job) => [job, this.describe(job)]));
    const ids = new Map<RolloutJob, string>();
    const stale: string[] = [];
    for (const job of jobs) {
      const inSlurm = queued.get(this.jobName(job)) ?? [];
      const keep = this.sameOnDisk(job, described.get(job) as Described) ? this.pick(job, inSlurm) : undefined;
      if (keep) ids.set(job, keep);
      stale.push(...inSlurm.filter((id) => id !== keep));
    }
    try {
      await cancelSlurmJobs(stale, this.pollMs);
    } catch (err) {
      throw new HoneError("runFailed", `this run's earlier jobs could not be cancelled: ${(err as Error).message}`);
    }
    const fresh = jobs.filter((job) => !ids.has(job));
    await eachAtMost(
      fresh,
      SUBMIT_AT_ONCE,
      async (job) => void ids.set(job, await this.submit(job, described.get(job) as Described)),
    );
    return new Map(jobs.map((job) => [ids.get(job) as string, job]));
  }

  /**
   * Of a rollout's jobs in Slurm, the one to wait for: the recorded id, else the last submitted (whose sbatch answer
   * never came back: its id is recorded now).
   */
  private pick(job: RolloutJob, inSlurm: string[]): string | undefined {
    const file = join(this.jobDir(job), ID_FILE);
    const recorded = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
    if (inSlurm.includes(recorded)) return recorded;
    const last = inSlurm.sort((a, b) => Number(a) - Number(b)).at(-1);
    if (last) writeFileSync(file, `${last}\n`);
    return last;
  }

  async *run(jobs: RolloutJob[]): AsyncIterable<RolloutJobResult> {
    const active = await this.start(jobs);
    const since = Date.now();
    while (active.size > 0) {
      await new Promise((r) => setTimeout(r, pollInterval(this.pollMs, Date.now() - since)));
      const reasons = new Map<string, string>();
      const states = await slurmStates([...active.keys()], reasons);
      for (const [id, job] of [...active]) {
        const state = states.get(id);
        if (state === undefined) continue; // no answer this poll
        if (mapSlurmState(state) === "active") {
          this.sayIfHeld(id, job, state, reasons.get(id));
          continue;
        }
        active.delete(id);
        yield this.ended(id, job, state);
      }
    }
  }

  /** Says, once a job, that the run waits on a job Slurm holds: it runs only once someone releases it. */
  private sayIfHeld(id: string, job: RolloutJob, state: string, reason: string | undefined): void {
    const held = heldBecause(state, reason);
    if (!held || this.saidHeld.has(id)) return;
    this.saidHeld.add(id);
    this.say(
      `Slurm job ${id} (${job.id}) is held (${held}); the run waits for it: release it with \`scontrol release ${id}\`, or cancel it with \`scancel ${id}\` (a failed measurement)`,
    );
  }

  /** A job's end: its rollout when it finished (its folder appears whole at its end), else why not. */
  private ended(id: string, job: RolloutJob, state: string): RolloutJobResult {
    const finished = existsSync(join(job.outDir, "result.json"));
    if (finished && (mapSlurmState(state) === "completed" || state === FORGOTTEN))
      return { id: job.id, outcome: this.outcomeOf(job) };
    const tail = logTail(join(this.jobDir(job), "slurm.out"));
    const how =
      state === FORGOTTEN
        ? "is no longer known to Slurm (its controller forgot it, and there is no accounting) and left no result"
        : `ended ${state}`;
    return { id: job.id, error: `Slurm job ${id} ${how}${tail ? `: ${tail}` : ""}` };
  }

  /** The rollout's outcome as its folder gives it (result.json and its best program), as the local pool returns it. */
  private outcomeOf(job: RolloutJob): RolloutOutcome | undefined {
    const read = (name: string) => {
      try {
        return readFileSync(join(job.outDir, name), "utf8");
      } catch {
        return undefined;
      }
    };
    return outcomeFromFiles(read("result.json"), read(`best_program${this.o.task.programExtension}`));
  }

  async close(): Promise<void> {}
}
