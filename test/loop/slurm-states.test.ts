import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FORGOTTEN, SlurmRunner, slurmStates } from "../../src/loop/distributed/slurm.ts";
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
function fakeSlurm(bodies: Partial<Record<"sbatch" | "squeue" | "scontrol" | "sacct", string>>): string {
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
  it("asks squeue once for every job of a poll, and the controller only about the jobs it no longer lists", () => {
    const log = fakeSlurm({
      squeue: 'printf "  101 RUNNING\\n102 PENDING\\n999 RUNNING\\n"',
      scontrol: 'case "$3" in 103) echo "JobId=103 JobName=x JobState=COMPLETED Reason=None" ;; *) exit 1 ;; esac',
      sacct: "exit 1",
    });
    const states = slurmStates(["101", "102", "103"]);
    expect(Object.fromEntries(states)).toEqual({ 101: "RUNNING", 102: "PENDING", 103: "COMPLETED" });
    expect(calls(log)).toEqual(["squeue -h -j 101,102,103 -o %i %T", "scontrol show job 103"]);
  });

  it("falls back to each job's own state when squeue refuses, and says which jobs the controller forgot", () => {
    const log = fakeSlurm({
      squeue: 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1',
      scontrol:
        'case "$3" in 201) echo "JobState=RUNNING" ;; *) echo "slurm_load_jobs error: Invalid job id" >&2; exit 1 ;; esac',
      sacct: 'case "$5" in 202) echo "CANCELLED by 0" ;; *) exit 0 ;; esac',
    });
    const states = slurmStates(["201", "202", "203"]);
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

  it("says nothing of a job while the controller does not answer (an outage is waited out, not a failure)", () => {
    const down = 'echo "slurm_load_jobs error: Unable to contact slurm controller (connect failure)" >&2; exit 1';
    fakeSlurm({ squeue: down, scontrol: down, sacct: 'echo "sacct: error: Problem talking to the database" >&2; exit 1' });
    expect(slurmStates(["301", "302"]).size).toBe(0);
  });
});

describe("SlurmRunner with jobs Slurm forgot", () => {
  it("takes a forgotten job's rollout when it finished, and fails one that left no result", { timeout: 20_000 }, async () => {
    const log = fakeSlurm({
      sbatch: 'case "$2" in *r-done*) echo "401" ;; *) echo "402;cluster" ;; esac',
      squeue: "exit 0", // neither is queued any more
      scontrol: 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1',
      sacct: "exit 0", // no accounting: nothing on either
    });
    const runDir = join(tempDir(), "run");
    const task = loadTaskFolder(CIRCLE_PACKING, { id: "circle-packing" });
    const start = { valid: true, score: 0.9, metrics: {}, artifacts: {}, seconds: 0 };
    const job = (id: string) => ({
      id,
      harnessDir: DEFAULT_HARNESS,
      startProgram: task.seedProgram,
      startEvaluation: start,
      seed: 0,
      maxEvals: 1,
      outDir: join(runDir, "rollouts", id),
    });
    // The rollout of r-done appeared whole before Slurm forgot its job; r-lost left nothing.
    mkdirSync(job("r-done").outDir, { recursive: true });
    writeFileSync(join(job("r-done").outDir, "result.json"), "{}");
    const runner = new SlurmRunner({ runDir, task, taskRef: "circle-packing", executor: { model: "offline" }, pollMs: 20 });
    const results: RolloutJobResult[] = [];
    for await (const r of runner.run([job("r-done"), job("r-lost")])) results.push(r);
    expect(results.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
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
