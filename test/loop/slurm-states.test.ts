import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pollInterval, SlurmRunner } from "../../src/loop/distributed/slurm.ts";
import {
  cancelSlurmJobs,
  FORGOTTEN,
  heldBecause,
  mapSlurmState,
  slurmStates,
} from "../../src/loop/distributed/slurm-commands.ts";
import type { RolloutJobResult } from "../../src/loop/runner.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, tempDir } from "../helpers/fixtures.ts";
import { seedRollout } from "../helpers/rollout-job.ts";

// How the Slurm runner learns its jobs' states on each poll, against stand-ins for squeue, scontrol and sacct that
// answer as Slurm's do (`squeue -h -o "%i %T %r"`: one "id STATE REASON" line per job; `scontrol show job`: JobState=…; sacct
// -P: one State per line, "CANCELLED by <uid>" included) and log how they were called. The real commands are tested
// against a real cluster in test/e2e/slurm.test.ts.

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

/** Stand-ins on PATH: each command's shell body; every call is logged as "<command> <args>" in the returned file. */
function fakeSlurm(bodies: Partial<Record<"sbatch" | "squeue" | "scontrol" | "sacct" | "scancel", string>>): string {
  const bin = join(tempDir(), "bin");
  mkdirSync(bin);
  const log = join(bin, "calls.log");
  for (const [cmd, body] of Object.entries(bodies)) {
    writeFileSync(join(bin, cmd), `#!/bin/sh\necho "${cmd} $*" >> ${JSON.stringify(log)}\n${body}\n`);
    chmodSync(join(bin, cmd), 0o755);
  }
  writeFileSync(log, "");
  process.env.PATH = `${bin}:${savedPath}`;
  return log;
}

const calls = (log: string) => readFileSync(log, "utf8").trim().split("\n").filter(Boolean);

describe("slurmStates", () => {
  it("asks squeue once for every job of a poll, and the controller only about the jobs it no longer lists", async () => {
    const log = fakeSlurm({
      squeue: 'printf "  101 RUNNING\\n102 PENDING\\n999 RUNNING\\n"',
      scontrol: 'case "$3" in 103) echo "JobId=103 JobName=x JobState=COMPLETED Reason=None" ;; *) exit 1 ;; esac',
      sacct: "exit 1",
    });
    const states = await slurmStates(["101", "102", "103"]);
    expect(Object.fromEntries(states)).toEqual({ 101: "RUNNING", 102: "PENDING", 103: "COMPLETED" });
    expect(calls(log)).toEqual(["squeue -h -j 101,102,103 -o %i %T %r", "scontrol show job 103"]);
  });

  it("falls back to each job's own state when squeue refuses, and says which jobs the controller forgot", async () => {
    const log = fakeSlurm({
      squeue: 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1',
      scontrol:
        'case "$3" in 201) echo "JobState=RUNNING" ;; *) echo "slurm_load_jobs error: Invalid job id" >&2; exit 1 ;; esac',
      sacct: 'case "$5" in 202) echo "CANCELLED by 0" ;; *) exit 0 ;; esac',
    });
    const states = await slurmStates(["201", "202", "203"]);
    expect(Object.fromEntries(states)).toEqual({ 201: "RUNNING", 202: "CANCELLED", 203: FORGOTTEN });
    expect(calls(log)).toEqual([
      "squeue -h -j 201,202,203 -o %i %T %r",
      "scontrol show job 201",
      "scontrol show job 202",
      "sacct -n -X -P -j 202 -o State",
      "scontrol show job 203",
      "sacct -n -X -P -j 203 -o State",
    ]);
  });

  it("says nothing of a job while the controller does not answer (an outage is waited out, not a failure)", async () => {
    const down = 'echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2; exit 1';
    fakeSlurm({ squeue: down, scontrol: down, sacct: 'echo "sacct: error: Problem talking to the database" >&2; exit 1' });
    const log = fakeSlurm({
      squeue: down,
      scontrol: down,
      sacct: 'echo "sacct: error: Problem talking to the database" >&2; exit 1',
    });
    expect((await slurmStates(["301", "302"])).size).toBe(0);
    // Nor is each job asked after: every command would wait out its bound, a poll would take hours.
    expect(calls(log)).toEqual(["squeue -h -j 301,302 -o %i %T %r"]);
  });
});

describe("mapSlurmState", () => {
  it("waits for every job Slurm may still run, held or requeued ones included, and fails only the ended ones", () => {
    const active = ["PENDING", "RUNNING", "REQUEUE_HOLD", "REQUEUE_FED", "SPECIAL_EXIT", "RESV_DEL_HOLD", "SIGNALING"];
    expect([...active, "STOPPED", "SUSPENDED", "COMPLETING"].map(mapSlurmState)).toEqual(Array(10).fill("active"));
    const ended = ["BOOT_FAIL", "CANCELLED", "CANCELLED+", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT"];
    expect([...ended, FORGOTTEN].map(mapSlurmState)).toEqual(Array(9).fill("failed"));
    expect(mapSlurmState("COMPLETED")).toBe("completed");
  });
});

const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
const rollout = (runDir: string, id: string, seed = 0) => seedRollout(task, id, join(runDir, "rollouts", id), seed);
const runnerOptions = (runDir: string) => ({
  runDir,
  task,
  taskRef: "circle-packing",
  executor: { model: "offline" },
  pollMs: 20,
});
const runnerIn = (runDir: string) => new SlurmRunner(runnerOptions(runDir));
const finish = (outDir: string) => {
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "result.json"), "{}");
};
async function collect(runner: SlurmRunner, jobs: ReturnType<typeof rollout>[]): Promise<RolloutJobResult[]> {
  const results: RolloutJobResult[] = [];
  for await (const r of runner.run(jobs)) results.push(r);
  return results.sort((a, b) => a.id.localeCompare(b.id));
}

describe("SlurmRunner with jobs Slurm forgot", () => {
  it("takes a forgotten job's rollout when it finished, and fails one that left no result", { timeout: 20_000 }, async () => {
    const log = fakeSlurm({
      sbatch: 'case "$3" in *r-done*) echo "401" ;; *) echo "402;cluster" ;; esac',
      squeue: "exit 0", // neither is queued any more
      scontrol: 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1',
      sacct: "exit 0", // no accounting: nothing on either
    });
    const runDir = join(tempDir(), "run");
    // The rollout of r-done appeared whole before Slurm forgot its job; r-lost left nothing.
    finish(rollout(runDir, "r-done").outDir);
    expect(await collect(runnerIn(runDir), [rollout(runDir, "r-done"), rollout(runDir, "r-lost")])).toEqual([
      { id: "r-done" },
      {
        id: "r-lost",
        error:
          "Slurm job 402 is no longer known to Slurm (its controller forgot it, and there is no accounting) and left no result",
      },
    ]);
    expect(calls(log).filter((c) => c.startsWith("squeue"))).toEqual([
      `squeue -h -a -u ${process.getuid?.()} -o %i %T %j`, // this run's jobs still in Slurm: none
      "squeue -h -j 401,402 -o %i %T %r",
    ]);
  });
});

describe("SlurmRunner on a resumed run", () => {
  it("waits again for the jobs of its name Slurm still runs with the same description, and submits each rollout once", {
    timeout: 20_000,
  }, async () => {
    const runDir = join(tempDir(), "run");
    const runner = runnerIn(runDir);
    const name = (id: string) => runner.jobName(rollout(runDir, id));
    // What the stopped coordinator left: a (501) and e (505, whose sbatch answer never came back: no id recorded) run
    // with this very description; f was submitted twice (506 recorded, 507 not); b runs (502) for another rollout
    // under its name; c's job (503) ended; d was never submitted. A job of another run (an older one, or one Slurm
    // numbered again) is never touched.
    const queued = { a: "501", b: "502", e: "505", f: "506" };
    const rows = [...Object.entries(queued).map(([id, n]) => `${n} RUNNING ${name(id)}`), `507 PENDING ${name("f")}`];
    rows.push("508 RUNNING hone-0123456789-a", "509 RUNNING someone-elses");
    const log = fakeSlurm({
      // -u: this user's jobs with their names (the queue at the start); -j: the poll, where none is queued any more
      squeue: `case "$3" in -u) printf "${rows.join("\\n")}\\n" ;; *) exit 0 ;; esac`,
      scontrol: 'case "$3" in 502|507) echo "JobState=CANCELLED" ;; *) echo "JobState=COMPLETED" ;; esac',
      sacct: "exit 1",
      sbatch: 'case "$3" in */b/*) echo 600 ;; */c/*) echo 601 ;; */d/*) echo "602;cluster" ;; *) exit 1 ;; esac',
      scancel: "exit 0",
    });
    for (const id of ["a", "b", "c", "e", "f"]) {
      const dir = join(runDir, "slurm", id);
      mkdirSync(dir, { recursive: true });
      const d = runner.describe(id === "b" ? rollout(runDir, id, 99) : rollout(runDir, id));
      writeFileSync(join(dir, "job.json"), d.json);
      writeFileSync(join(dir, "job.sh"), d.script);
      if (id !== "e") writeFileSync(join(dir, "slurm-job-id"), `${{ ...queued, c: "503" }[id as "a"]}\n`);
    }
    const ids = ["a", "b", "c", "d", "e", "f"];
    for (const id of ids) finish(rollout(runDir, id).outDir);
    const jobs = ids.map((id) => rollout(runDir, id));
    expect(await collect(runnerIn(runDir), jobs)).toEqual(jobs.map((j) => ({ id: j.id })));
    const made = calls(log).filter((c) => /^(sbatch|scancel)/.test(c));
    expect(made[0]).toBe("scancel 502 507"); // before any submission, and no other run's job
    // Up to 4 sbatch calls run at once, so they reach the log in any order.
    const submitted = made.slice(1).map((c) => c.split("/").slice(-2).join("/"));
    expect(submitted.sort()).toEqual(["b/job.sh", "c/job.sh", "d/job.sh"]);
    const recorded = ids.map((id) => readFileSync(join(runDir, "slurm", id, "slurm-job-id"), "utf8").trim());
    expect(recorded).toEqual(["501", "600", "601", "602", "505", "506"]);
  });

  it("submits again a job whose settings changed (a longer --slurm-time), after its old job is gone", {
    timeout: 20_000,
  }, async () => {
    const runDir = join(tempDir(), "run");
    const before = runnerIn(runDir);
    const job = rollout(runDir, "a");
    const d = before.describe(job);
    mkdirSync(join(runDir, "slurm", "a"), { recursive: true });
    writeFileSync(join(runDir, "slurm", "a", "job.json"), d.json);
    writeFileSync(join(runDir, "slurm", "a", "job.sh"), d.script);
    const log = fakeSlurm({
      squeue: `case "$3" in -u) echo "501 RUNNING ${before.jobName(job)}" ;; *) exit 0 ;; esac`,
      scontrol: 'case "$3" in 501) echo "JobState=CANCELLED" ;; *) echo "JobState=COMPLETED" ;; esac',
      sbatch: "echo 600",
      scancel: "exit 0",
    });
    finish(job.outDir);
    const after = new SlurmRunner({ ...runnerOptions(runDir), timeMinutes: 120 });
    expect(await collect(after, [job])).toEqual([{ id: "a" }]);
    expect(calls(log).filter((c) => /^(sbatch|scancel)/.test(c))).toEqual([
      "scancel 501",
      `sbatch --parsable --job-name=${after.jobName(job)} ${join(runDir, "slurm", "a", "job.sh")}`,
    ]);
    expect(readFileSync(join(runDir, "slurm", "a", "job.sh"), "utf8")).toMatch(/#SBATCH --time=120/);
  });

  it("cancels the job a killed `hone run` left (its build folder was another), by the --out that names them", {
    timeout: 20_000,
  }, async () => {
    const out = join(tempDir(), "out");
    const killed = new SlurmRunner({ ...runnerOptions(join(tempDir(), ".out.partial-101")), namedBy: out });
    const again = new SlurmRunner({ ...runnerOptions(join(tempDir(), ".out.partial-202")), namedBy: out });
    const job = (r: SlurmRunner) => rollout(join(r === killed ? "/a" : "/b"), "rollout");
    expect(again.jobName(job(again))).toBe(killed.jobName(job(killed)));
    const log = fakeSlurm({
      squeue: `case "$3" in -u) echo "801 RUNNING ${killed.jobName(job(killed))}" ;; *) exit 0 ;; esac`,
      scontrol: 'case "$3" in 801) echo "JobState=CANCELLED" ;; *) echo "JobState=COMPLETED" ;; esac',
      sbatch: "echo 802",
      scancel: "exit 0",
    });
    finish(job(again).outDir);
    expect(await collect(again, [job(again)])).toEqual([{ id: "rollout" }]);
    const made = calls(log).filter((c) => /^(sbatch|scancel)/.test(c));
    expect(made).toHaveLength(2);
    expect(made[0]).toBe("scancel 801");
    expect(made[1]).toMatch(/^sbatch --parsable --job-name=hone-\w+-rollout /);
  });

  it("refuses to start while the controller does not answer, having submitted nothing", { timeout: 20_000 }, async () => {
    const log = fakeSlurm({
      squeue: 'echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2; exit 1',
      sbatch: "echo 600",
    });
    const runDir = join(tempDir(), "run");
    await expect(collect(runnerIn(runDir), [rollout(runDir, "a")])).rejects.toThrow(
      /Slurm did not answer for this run.s jobs \(squeue failed: .*\(connect failure\)\); nothing was submitted/,
    );
    expect(calls(log)).toEqual(Array(5).fill(`squeue -h -a -u ${process.getuid?.()} -o %i %T %j`));
  });

  it("fails the run on a refused submission once the others are through, their ids written", { timeout: 20_000 }, async () => {
    fakeSlurm({
      sbatch:
        'case "$3" in */bad/*) echo "sbatch: error: Batch job submission failed: Invalid partition name" >&2; exit 1 ;; */a/*) echo 701 ;; *) echo 702 ;; esac',
      squeue: "exit 0",
    });
    const runDir = join(tempDir(), "run");
    const jobs = ["a", "bad", "c"].map((id) => rollout(runDir, id));
    await expect(collect(runnerIn(runDir), jobs)).rejects.toThrow(
      /sbatch refused .*bad\/job\.sh: sbatch failed: sbatch: error: Batch job submission failed: Invalid partition name/,
    );
    expect(readFileSync(join(runDir, "slurm", "a", "slurm-job-id"), "utf8")).toBe("701\n");
    expect(readFileSync(join(runDir, "slurm", "c", "slurm-job-id"), "utf8")).toBe("702\n");
  });

  it("refuses what sbatch printed when it is not a job id (a wrapper's banner alone, nothing)", { timeout: 20_000 }, async () => {
    fakeSlurm({ sbatch: 'case "$3" in */a/*) printf "" ;; *) echo "Welcome to the cluster" ;; esac', squeue: "exit 0" });
    const runDir = join(tempDir(), "run");
    for (const id of ["a", "b"])
      await expect(collect(runnerIn(runDir), [rollout(runDir, id)])).rejects.toThrow(/sbatch .*job\.sh printed no job id/);
    fakeSlurm({ sbatch: 'echo "Welcome to the cluster"; echo "812;west"', squeue: "exit 0", scontrol: "echo JobState=FAILED" });
    const [result] = await collect(runnerIn(runDir), [rollout(runDir, "c")]);
    expect(result?.error).toMatch(/^Slurm job 812 ended FAILED/);
  });
});

describe("a job Slurm holds", () => {
  it("is held when squeue's reason or its state says someone must act, and only then", () => {
    expect(heldBecause("PENDING", "JobHeldUser")).toBe("JobHeldUser");
    expect(heldBecause("PENDING", "JobHeldAdmin")).toBe("JobHeldAdmin");
    expect(heldBecause("REQUEUE_HOLD", "None")).toBe("REQUEUE_HOLD");
    expect(heldBecause("PENDING", "Resources")).toBeUndefined();
    expect(heldBecause("RUNNING", "None")).toBeUndefined();
  });

  it("is waited for, and the run says so once", { timeout: 20_000 }, async () => {
    // Held for the first three polls, then released and finished.
    fakeSlurm({
      sbatch: "echo 701",
      squeue:
        'case "$3" in -u) exit 0 ;; esac; n=$(grep -c "^squeue -h -j" "$(dirname "$0")/calls.log"); [ "$n" -gt 3 ] || echo "701 PENDING JobHeldAdmin"',
      scontrol: "echo JobState=COMPLETED",
    });
    const runDir = join(tempDir(), "run");
    const said: string[] = [];
    const job = rollout(runDir, "a");
    finish(job.outDir);
    expect(await collect(new SlurmRunner({ ...runnerOptions(runDir), say: (t) => said.push(t) }), [job])).toEqual([{ id: "a" }]);
    expect(said).toEqual([
      "Slurm job 701 (a) is held (JobHeldAdmin); the run waits for it: release it with `scontrol release 701`, or cancel it with `scancel 701` (a failed measurement)",
    ]);
  });
});

describe("pollInterval", () => {
  it("polls a tenth of the jobs' time so far, from the poll interval up to 15 s", () => {
    expect([0, 5_000, 60_000, 120_000, 600_000, 3_600_000].map((ms) => pollInterval(1000, ms))).toEqual([
      1000, 1000, 6000, 12_000, 15_000, 15_000,
    ]);
  });
});

describe("cancelSlurmJobs", () => {
  it("waits until the cancelled jobs are gone, and says which still run past its bound", async () => {
    fakeSlurm({ scancel: "exit 0", squeue: 'echo "901 RUNNING"; echo "902 COMPLETING"' });
    await expect(cancelSlurmJobs(["901", "902"], 10, 100)).rejects.toThrow(/Slurm jobs 901, 902 still run 0.1 s after scancel/);
    fakeSlurm({ scancel: 'echo "scancel: error: Unable to contact slurm controller" >&2; exit 1' });
    await expect(cancelSlurmJobs(["903"], 10, 100)).rejects.toThrow(/scancel failed: scancel: error: Unable to contact/);
  });
});
