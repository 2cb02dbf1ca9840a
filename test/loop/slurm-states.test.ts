import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { slurmStates } from "../../src/loop/distributed/slurm.ts";
import { tempDir } from "../helpers/fixtures.ts";

// How the Slurm runner learns its jobs' states on each poll, against stand-ins for squeue, scontrol and sacct that
// answer as Slurm's do (`squeue -h -o "%i %T"`: one "id STATE" line per job; `scontrol show job`: JobState=…; sacct
// -P: one State per line, "CANCELLED by <uid>" included) and log how they were called. The real commands are tested
// against a real cluster in test/e2e/slurm.test.ts.

const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

/** Stand-ins on PATH: each command's shell body; every call is logged as "<command> <args>" in the returned file. */
function fakeSlurm(bodies: Record<"squeue" | "scontrol" | "sacct", string>): string {
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

  it("falls back to each job's own state when squeue refuses, and leaves out a job nothing knows", () => {
    const log = fakeSlurm({
      squeue: 'echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1',
      scontrol:
        'case "$3" in 201) echo "JobState=RUNNING" ;; *) echo "slurm_load_jobs error: Invalid job id" >&2; exit 1 ;; esac',
      sacct: 'case "$5" in 202) echo "CANCELLED by 0" ;; *) exit 0 ;; esac',
    });
    const states = slurmStates(["201", "202", "203"]);
    expect(Object.fromEntries(states)).toEqual({ 201: "RUNNING", 202: "CANCELLED" });
    expect(calls(log)).toEqual([
      "squeue -h -j 201,202,203 -o %i %T",
      "scontrol show job 201",
      "scontrol show job 202",
      "sacct -n -X -P -j 202 -o State",
      "scontrol show job 203",
      "sacct -n -X -P -j 203 -o State",
    ]);
  });
});
