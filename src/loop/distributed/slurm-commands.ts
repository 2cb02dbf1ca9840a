import { execFile } from "node:child_process";
import { userInfo } from "node:os";

// What the Slurm runner asks of Slurm's commands, none of them blocking the coordinator: a controller under load
// takes seconds to answer sbatch or squeue, and a run's progress, its other jobs and its stop handling go on
// meanwhile. Every command is bounded in time; one that does not answer in time has not answered.

/** How long a Slurm command may take (sbatch retries a busy controller for a while before it gives up). */
export const COMMAND_TIMEOUT_MS = 120_000;

/** The most a Slurm command may print: squeue lists every job of the user's (a heavy user has tens of thousands). */
const MAX_OUTPUT = 64 << 20;

/** A Slurm command that failed: its exit, its stderr, and whether it ran out of time. */
export class SlurmCommandError extends Error {
  constructor(
    readonly command: string,
    readonly stderr: string,
    readonly timedOut: boolean,
  ) {
    super(
      timedOut ? `${command} did not answer in ${COMMAND_TIMEOUT_MS / 1000} s` : `${command} failed: ${stderr || "(no message)"}`,
    );
  }
}

/** Runs a Slurm command to its end and returns its trimmed stdout. */
export function slurmCommand(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = {
      encoding: "utf8" as const,
      timeout: COMMAND_TIMEOUT_MS,
      killSignal: "SIGKILL" as const,
      maxBuffer: MAX_OUTPUT,
    };
    execFile(cmd, args, options, (err, stdout, stderr) => {
      if (!err) return resolve(stdout.trim());
      const e = err as { killed?: boolean; code?: unknown };
      const timedOut = e.killed === true && e.code !== "ERR_CHILD_PROCESS_STDIO_MAXBUFFER";
      reject(new SlurmCommandError(cmd, String(stderr || err.message).trim(), timedOut));
    });
  });
}

/**
 * What `slurmStates` says of a job the controller answered it does not know and accounting has nothing on: it ended
 * long enough ago to be forgotten (MinJobAge) while no one asked, with no accounting to say how.
 */
export const FORGOTTEN = "FORGOTTEN";

/** The states in which a job has ended for good; any other (pending, running, requeued, held, stopped…) is active. */
const ENDED = new Set([
  "BOOT_FAIL",
  "CANCELLED",
  "COMPLETED",
  "DEADLINE",
  "FAILED",
  "NODE_FAIL",
  "OUT_OF_MEMORY",
  "PREEMPTED",
  "REVOKED",
  "TIMEOUT",
]);

/**
 * Why a job Slurm lists will not run until someone acts, from its state and squeue's reason; undefined when it will.
 * A held job is waited for (it may be released), but a run that waits on one says so.
 */
export function heldBecause(state: string, reason: string | undefined): string | undefined {
  if (reason?.startsWith("JobHeld")) return reason;
  return ["REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED", "SUSPENDED", "RESV_DEL_HOLD"].includes(state.toUpperCase())
    ? state
    : undefined;
}

/**
 * Slurm job states, mapped to hone's: still to wait for (a job Slurm may run yet: pending, running, requeued, held,
 * stopped), done, or a failed measurement with its reason.
 */
export function mapSlurmState(state: string): "active" | "completed" | "failed" {
  const s = state.toUpperCase().replace(/\+$/, "");
  if (s === "COMPLETED") return "completed";
  return ENDED.has(s) || s === FORGOTTEN ? "failed" : "active";
}

/**
 * The states of Slurm jobs by id: one squeue for all of them while they are queued or running (a poll costs one
 * process, not one a job), then scontrol and sacct for each it no longer lists. A job none of them knows is absent
 * from the map. `reasons` gets why squeue says each job it lists is in its state (Resources, JobHeldUser, None…).
 */
export async function slurmStates(ids: string[], reasons?: Map<string, string>): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  if (ids.length === 0) return states;
  const wanted = new Set(ids);
  try {
    for (const line of (await slurmCommand("squeue", ["-h", "-j", ids.join(","), "-o", "%i %T %r"])).split("\n")) {
      const [id, state, reason] = line.trim().split(/\s+/);
      if (!id || !state || !wanted.has(id)) continue;
      states.set(id, state);
      if (reason) reasons?.set(id, reason);
    }
  } catch (err) {
    // squeue refuses a lone job id it no longer lists; any other failure is a controller not answering, which the
    // other commands would not answer either (each bounded at two minutes: a poll would take hours)
    if (!(err instanceof SlurmCommandError && /invalid job id/i.test(err.stderr))) return states;
  }
  for (const id of ids) {
    if (states.has(id)) continue;
    const state = await endedState(id);
    if (state) states.set(id, state);
  }
  return states;
}

/**
 * This user's jobs in Slurm's queue whose name starts with `prefix`, with their ids and states, from one squeue.
 * Throws when the controller does not answer.
 */
export async function namedJobs(prefix: string): Promise<{ id: string; state: string; name: string }[]> {
  // Every partition (-a: hidden ones too), this user's jobs only.
  const out = await slurmCommand("squeue", [
    "-h",
    "-a",
    "-u",
    String(process.getuid?.() ?? userInfo().username),
    "-o",
    "%i %T %j",
  ]);
  return out
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([id, state, name]) => id && state && name?.startsWith(prefix))
    .map(([id, state, name]) => ({ id: id as string, state: state as string, name: name as string }));
}

/**
 * The state of a Slurm job no longer queued: scontrol while the controller remembers it, then sacct (with
 * accounting), else FORGOTTEN when the controller said it does not know the job. A controller that did not answer
 * says nothing of the job (undefined), so a run waits out an outage instead of failing its jobs.
 */
async function endedState(id: string): Promise<string | undefined> {
  let forgotten = false;
  try {
    const m = /JobState=([A-Z_]+)/.exec(await slurmCommand("scontrol", ["show", "job", id]));
    if (m) return m[1];
  } catch (err) {
    forgotten = err instanceof SlurmCommandError && /invalid job id/i.test(err.stderr);
  }
  try {
    const a = await slurmCommand("sacct", ["-n", "-X", "-P", "-j", id, "-o", "State"]);
    if (a) return a.split("\n")[0]?.split(" ")[0];
  } catch {
    // no accounting
  }
  return forgotten ? FORGOTTEN : undefined;
}

/**
 * Cancels jobs by id and waits until Slurm no longer runs any of them (scancel only starts a job's end: its
 * processes get KillWait to stop), at most `waitMs`; throws when they still run then, or scancel failed.
 */
export async function cancelSlurmJobs(ids: string[], pollMs: number, waitMs = 300_000): Promise<void> {
  if (ids.length === 0) return;
  await slurmCommand("scancel", ids);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const states = await slurmStates(ids);
    const left = ids.filter((id) => mapSlurmState(states.get(id) ?? "ACTIVE") === "active");
    if (left.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `Slurm job${left.length > 1 ? "s" : ""} ${left.join(", ")} still run${left.length > 1 ? "" : "s"} ${waitMs / 1000} s after scancel`,
      );
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
