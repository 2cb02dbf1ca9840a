import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { HoneError } from "../../errors.ts";
import { contentHash } from "../../harness/files.ts";
import type { ModelSettings } from "../../model/resolve.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import type { RolloutJob, RolloutJobResult, Runner } from "../runner.ts";
import { toJobData } from "./job-data.ts";

const HONE_BIN = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "bin", "hone.js");

export interface SlurmSettings {
  partition?: string;
  gres?: string;
  /** Minutes per rollout job (sbatch --time). */
  timeMinutes?: number;
  /** Environment variables carried into the job besides PATH and HOME (names only; values from the submitting shell). */
  env?: string[];
  /** A job script template with {{name}}, {{output}}, {{directives}}, {{command}} placeholders. */
  template?: string;
}

const DEFAULT_TEMPLATE = `#!/bin/bash
#SBATCH --job-name={{name}}
#SBATCH --output={{output}}
{{directives}}
set -euo pipefail
{{command}}
`;

/** Slurm job states, mapped to hone's: pending/running, done, or a failed measurement with its reason. */
export function mapSlurmState(state: string): "active" | "completed" | "failed" {
  const s = state.toUpperCase().replace(/\+$/, "");
  if (["PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "STAGE_OUT"].includes(s))
    return "active";
  if (s === "COMPLETED") return "completed";
  return "failed";
}

/**
 * What `slurmStates` says of a job the controller answered it does not know and accounting has nothing on: it ended
 * long enough ago to be forgotten (MinJobAge) while no one asked, with no accounting to say how.
 */
export const FORGOTTEN = "FORGOTTEN";

function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

/**
 * The states of Slurm jobs by id: one squeue for all of them while they are queued or running (a poll costs one
 * process, not one a job: each is a blocking call on the coordinator), then scontrol and sacct for each it no longer
 * lists. A job none of them knows is absent from the map.
 */
export function slurmStates(ids: string[]): Map<string, string> {
  const states = new Map<string, string>();
  const wanted = new Set(ids);
  try {
    for (const line of sh("squeue", ["-h", "-j", ids.join(","), "-o", "%i %T"]).split("\n")) {
      const [id, state] = line.trim().split(/\s+/);
      if (id && state && wanted.has(id)) states.set(id, state);
    }
  } catch {
    // none of them in the queue any more (squeue refuses a lone job id it does not know)
  }
  for (const id of ids) {
    if (states.has(id)) continue;
    const state = endedState(id);
    if (state) states.set(id, state);
  }
  return states;
}

/**
 * The state of a Slurm job no longer queued: scontrol while the controller remembers it, then sacct (with
 * accounting), else FORGOTTEN when the controller said it does not know the job. A controller that did not answer
 * says nothing of the job (undefined), so a run waits out an outage instead of failing its jobs.
 */
function endedState(id: string): string | undefined {
  let forgotten = false;
  try {
    const m = /JobState=([A-Z_]+)/.exec(sh("scontrol", ["show", "job", id]));
    if (m) return m[1];
  } catch (err) {
    forgotten = /invalid job id/i.test(String((err as { stderr?: unknown }).stderr ?? ""));
  }
  try {
    const a = sh("sacct", ["-n", "-X", "-P", "-j", id, "-o", "State"]);
    if (a) return a.split("\n")[0]?.split(" ")[0];
  } catch {
    // no accounting
  }
  return forgotten ? FORGOTTEN : undefined;
}

export interface SlurmRunnerOptions extends SlurmSettings {
  runDir: string;
  task: DiscoveryTask;
  taskRef: string;
  tasksDir?: string;
  executor: Partial<ModelSettings> & { model: string };
  timeLimitSec?: number;
  pollMs?: number;
}

/**
 * Each rollout an sbatch job on a shared filesystem: the job description and script go under the run directory's
 * slurm/ folder, the job runs `hone rollout-job` and writes the rollout straight into the run directory.
 * Cancelled, timed-out or failed jobs are failed measurements with their Slurm state, never scores.
 */
export class SlurmRunner implements Runner {
  private readonly taskHash: string;
  constructor(private readonly o: SlurmRunnerOptions) {
    this.taskHash = contentHash(o.task.dir);
  }

  private submit(job: RolloutJob): string {
    const dir = join(this.o.runDir, "slurm", job.id);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const data = toJobData(job, {
      runKey: this.o.runDir,
      taskRef: this.o.taskRef,
      tasksDir: this.o.tasksDir,
      taskHash: this.taskHash,
      executor: this.o.executor,
      timeLimitSec: this.o.timeLimitSec,
    });
    writeFileSync(join(dir, "job.json"), JSON.stringify(data));
    const carry = ["PATH", "HOME", "PYENV_ROOT", "HONE_CACHE_DIR", ...(this.o.env ?? [])].filter(
      (k) => process.env[k] !== undefined,
    );
    const directives = [
      this.o.partition ? `#SBATCH --partition=${this.o.partition}` : "",
      this.o.gres ? `#SBATCH --gres=${this.o.gres}` : "",
      `#SBATCH --time=${this.o.timeMinutes ?? 60}`,
      `#SBATCH --export=${carry.join(",") || "NONE"}`,
    ]
      .filter(Boolean)
      .join("\n");
    const template = this.o.template ? readFileSync(this.o.template, "utf8") : DEFAULT_TEMPLATE;
    const command = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(HONE_BIN)} rollout-job ${JSON.stringify(join(dir, "job.json"))} --out ${JSON.stringify(job.outDir)}`;
    const script = template
      .replace("{{name}}", `hone-${job.id}`)
      .replace("{{output}}", join(dir, "slurm.out"))
      .replace("{{directives}}", directives)
      .replace("{{command}}", command);
    writeFileSync(join(dir, "job.sh"), script);
    try {
      return sh("sbatch", ["--parsable", join(dir, "job.sh")]).split(";")[0] as string;
    } catch (err) {
      throw new HoneError(
        "runFailed",
        `sbatch refused ${join(dir, "job.sh")}: ${String((err as { stderr?: string }).stderr ?? err).trim()}`,
      );
    }
  }

  async *run(jobs: RolloutJob[]): AsyncIterable<RolloutJobResult> {
    const active = new Map(jobs.map((j) => [this.submit(j), j]));
    while (active.size > 0) {
      await new Promise((r) => setTimeout(r, this.o.pollMs ?? 1000));
      const states = slurmStates([...active.keys()]);
      for (const [id, job] of [...active]) {
        const state = states.get(id);
        if (state === undefined || mapSlurmState(state) === "active") continue;
        active.delete(id);
        // A rollout's folder appears whole at its end, so its result says it finished, also of a job Slurm forgot.
        const finished = existsSync(join(job.outDir, "result.json"));
        if (finished && (mapSlurmState(state) === "completed" || state === FORGOTTEN)) {
          yield { id: job.id };
        } else {
          const log = join(this.o.runDir, "slurm", job.id, "slurm.out");
          const tail = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").slice(-3).join(" | ") : "";
          const how =
            state === FORGOTTEN
              ? "is no longer known to Slurm (its controller forgot it, and there is no accounting) and left no result"
              : `ended ${state}`;
          yield { id: job.id, error: `Slurm job ${id} ${how}${tail ? `: ${tail}` : ""}` };
        }
      }
    }
  }

  async close(): Promise<void> {}
}
