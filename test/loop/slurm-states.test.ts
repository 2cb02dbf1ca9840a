import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SlurmRunner } from "../../src/loop/distributed/slurm.ts";
import { FORGOTTEN, slurmStates } from "../../src/loop/distributed/slurm-commands.ts";
import { DEFAULT_HARNESS } from "../../src/loop/run.ts";
import type { RolloutJobResult } from "../../src/loop/runner.ts";
import { loadTaskFolder } from "../../src/task/discovery-task.ts";
import { CIRCLE_PACKING, tempDir } from "../helpers/fixtures.ts";

// How the Slurm runner learns its jobs' states on each poll, against stand-ins for squeue, scontrol and sacct that
// answer as Slurm's do (`squeue -h -o "%i %T"`: one "id STATE" line per job; `scontrol show job`: JobState=…; sacct
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
    expect(calls(log)).toEqual(["squeue -h -j 101,102,103 -o %i %T", "scontrol show job 103"]);
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
      "squeue -h -j 201,202,203 -o %i %T",
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
    expect((await slurmStates(["301", "302"])).size).toBe(0);
  });
});

const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
const start = { valid: true, score: 0.9, metrics: {}, artifacts: {}, seconds: 0 };
const rollout = (runDir: string, id: string, seed = 0) => ({
  id,
  harnessDir: DEFAULT_HARNESS,
  startProgram: task.seedProgram,
  startEvaluation: start,
  seed,
  maxEvals: 1,
  outDir: join(runDir, "rollouts", id),
});
const runnerIn = (runDir: string) =>
  new SlurmRunner({ runDir, task, taskRef: "circle-packing", executor: { model: "offline" }, pollMs: 20 });
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
      sbatch: 'case "$2" in *r-done*) echo "401" ;; *) echo "402;cluster" ;; esac',
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
    expect(calls(log).filter((c) => c.startsWith("squeue"))).toEqual(["squeue -h -j 401,402 -o %i %T"]);
  });
});

describe("SlurmRunner on a resumed run", () => {
  it("waits again for the jobs an earlier coordinator submitted that still run, and submits each rollout once", {
    timeout: 20_000,
  }, async () => {
    // squeue lists the earlier coordinator's 501 and 502 as running on its first call (the resumed run's look),
    // then nothing; scontrol knows how every job ended; sbatch gives b, c and d 600, 601 and 602.
    const log = fakeSlurm({
      squeue: 'n=$(grep -c "^squeue" "$(dirname "$0")/calls.log"); [ "$n" -gt 1 ] || printf "501 RUNNING\\n502 RUNNING\\n"',
      scontrol:
        'case "$3" in 503) echo "JobState=FAILED" ;; 501|60?) echo "JobState=COMPLETED" ;; *) echo "slurm_load_jobs error: Invalid job id" >&2; exit 1 ;; esac',
      sacct: "exit 1",
      sbatch: 'case "$2" in */b/*) echo 600 ;; */c/*) echo 601 ;; */d/*) echo 602 ;; *) exit 1 ;; esac',
      scancel: "exit 0",
    });
    const runDir = join(tempDir(), "run");
    const first = runnerIn(runDir);
    // The earlier coordinator's jobs: a (501, running), b (502, running but for another rollout), c (503, failed).
    const earlier = { a: "501", b: "502", c: "503" };
    for (const [id, slurmId] of Object.entries(earlier)) {
      const dir = join(runDir, "slurm", id);
      mkdirSync(dir, { recursive: true });
      const job = id === "b" ? rollout(runDir, id, 99) : rollout(runDir, id);
      writeFileSync(join(dir, "job.json"), first.jobData(job));
      writeFileSync(join(dir, "slurm-job-id"), `${slurmId}\n`);
    }
    for (const id of ["a", "b", "c", "d"]) finish(rollout(runDir, id).outDir);
    const jobs = ["a", "b", "c", "d"].map((id) => rollout(runDir, id));
    expect(await collect(runnerIn(runDir), jobs)).toEqual(jobs.map((j) => ({ id: j.id })));
    const made = calls(log).filter((c) => /^(sbatch|scancel)/.test(c));
    expect(made.slice(0, 1)).toEqual(["scancel 502"]); // the job for another rollout goes before any submission
    expect(
      made
        .slice(1)
        .map((c) => c.split("/").slice(-2).join("/"))
        .sort(),
    ).toEqual(["b/job.sh", "c/job.sh", "d/job.sh"]);
    const ids = Object.fromEntries(
      ["a", "b", "c", "d"].map((id) => [id, readFileSync(join(runDir, "slurm", id, "slurm-job-id"), "utf8").trim()]),
    );
    expect(ids.a).toBe("501");
    expect([ids.b, ids.c, ids.d]).toEqual(["600", "601", "602"]);
  });

  it("fails the run on a refused submission once the others are through, their ids written for a resume", {
    timeout: 20_000,
  }, async () => {
    fakeSlurm({
      sbatch:
        'case "$2" in */bad/*) echo "sbatch: error: Batch job submission failed: Invalid partition name" >&2; exit 1 ;; */a/*) echo 701 ;; *) echo 702 ;; esac',
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
});
