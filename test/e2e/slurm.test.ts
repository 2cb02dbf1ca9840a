import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareRecords } from "../../src/loop/compare-runs.ts";
import { mapSlurmState } from "../../src/loop/distributed/slurm.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// A single-node Slurm (Debian's slurm-wlm with munge, a small config) brought up by the test when it can: root,
// and the binaries installed (.ci/run installs them). Otherwise the cluster tests are skipped, saying why.
const have = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const canSlurm = process.getuid?.() === 0 && ["slurmctld", "slurmd", "munged", "sbatch"].every(have);
const dir = tempDir("hone-slurm-");
const conf = join(dir, "slurm.conf");
const env = { SLURM_CONF: conf };

beforeAll(async () => {
  if (!canSlurm) return;
  mkdirSync(join(dir, "state"), { recursive: true });
  mkdirSync(join(dir, "spool"), { recursive: true });
  if (!existsSync("/run/munge/munge.socket.2")) {
    mkdirSync("/etc/munge", { recursive: true });
    mkdirSync("/run/munge", { recursive: true });
    if (!existsSync("/etc/munge/munge.key")) writeFileSync("/etc/munge/munge.key", Buffer.alloc(1024, 7), { mode: 0o400 });
    execFileSync("munged", ["--force"], { stdio: "ignore" });
  }
  const host = hostname();
  writeFileSync(
    conf,
    [
      "ClusterName=honetest",
      `SlurmctldHost=${host}`,
      "SlurmctldPort=6927",
      "SlurmdPort=6928",
      "SlurmUser=root",
      "SlurmdUser=root",
      "AuthType=auth/munge",
      "ProctrackType=proctrack/linuxproc",
      "TaskPlugin=task/none",
      "SelectType=select/cons_tres",
      "SelectTypeParameters=CR_Core",
      `StateSaveLocation=${dir}/state`,
      `SlurmdSpoolDir=${dir}/spool`,
      `SlurmctldPidFile=${dir}/slurmctld.pid`,
      `SlurmdPidFile=${dir}/slurmd.pid`,
      `SlurmctldLogFile=${dir}/slurmctld.log`,
      `SlurmdLogFile=${dir}/slurmd.log`,
      "ReturnToService=2",
      "MpiDefault=none",
      "JobAcctGatherType=jobacct_gather/none",
      "AccountingStorageType=accounting_storage/none",
      "MinJobAge=600",
      `NodeName=${host} CPUs=2 RealMemory=2000 State=UNKNOWN`,
      `PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP`,
      "",
    ].join("\n"),
  );
  execFileSync("slurmctld", ["-f", conf], { stdio: "ignore", env: { ...process.env, ...env } });
  execFileSync("slurmd", ["-f", conf], { stdio: "ignore", env: { ...process.env, ...env } });
  for (let i = 0; i < 40; i++) {
    const out = spawnSync("sinfo", ["-h", "-o", "%t"], { env: { ...process.env, ...env }, encoding: "utf8" }).stdout.trim();
    if (out === "idle") break;
    await new Promise((r) => setTimeout(r, 250));
  }
});

afterAll(() => {
  if (!canSlurm) return;
  spawnSync("scancel", ["--full", "-u", "root"], { env: { ...process.env, ...env } });
  for (const f of ["slurmd.pid", "slurmctld.pid"]) {
    try {
      process.kill(Number(readFileSync(join(dir, f), "utf8").trim()), "SIGTERM");
    } catch {
      // already stopped
    }
  }
});

describe("Slurm", () => {
  it("maps Slurm job states to hone's", () => {
    expect(["PENDING", "RUNNING", "COMPLETING"].map(mapSlurmState)).toEqual(["active", "active", "active"]);
    expect(mapSlurmState("COMPLETED")).toBe("completed");
    expect(
      ["CANCELLED", "CANCELLED+", "TIMEOUT", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"].map(mapSlurmState),
    ).toEqual(Array(7).fill("failed"));
  });

  it.skipIf(!canSlurm)(
    "runs a round through sbatch jobs with the same records as the local pool",
    { timeout: 180_000 },
    async () => {
      const args = [
        "optimize",
        "--task",
        "circle-packing",
        "--rounds",
        "1",
        "--proposals",
        "2",
        "--max-evals",
        "3",
        "--seed",
        "6",
        "--cache",
        "off",
        "--json",
      ];
      const local = join(tempDir(), "local");
      expect((await hone([...args, "--out", local])).code).toBe(0);
      const cluster = join(tempDir(), "slurm");
      const r = await hone([...args, "--runner", "slurm", "--slurm-time", "10", "--out", cluster], { env, timeoutMs: 170_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(cluster, "slurm", "r01-k0", "job.sh"))).toBe(true);
      expect(readFileSync(join(cluster, "slurm", "r01-k0", "job.sh"), "utf8")).toMatch(/#SBATCH --time=10/);
      const a = new Database(join(local, "hone.db"), { readonly: true });
      const b = new Database(join(cluster, "hone.db"), { readonly: true });
      const { differences } = compareRecords(a, b);
      a.close();
      b.close();
      expect(differences).toEqual([]);
    },
  );

  it.skipIf(!canSlurm)("records a cancelled job as a failed measurement, never a score", { timeout: 120_000 }, async () => {
    const template = join(dir, "slow.sh");
    writeFileSync(
      template,
      "#!/bin/bash\n#SBATCH --job-name={{name}}\n#SBATCH --output={{output}}\n{{directives}}\nsleep 600\n{{command}}\n",
    );
    const out = join(tempDir(), "cancelled");
    const run = hone(
      [
        "optimize",
        "--task",
        "circle-packing",
        "--rounds",
        "1",
        "--proposals",
        "1",
        "--max-evals",
        "2",
        "--cache",
        "off",
        "--runner",
        "slurm",
        "--slurm-template",
        template,
        "--out",
        out,
        "--json",
      ],
      { env, timeoutMs: 110_000 },
    );
    // Cancel every job the run submits (each would otherwise sleep for ten minutes).
    const cancel = setInterval(() => spawnSync("scancel", ["--full", "-u", "root"], { env: { ...process.env, ...env } }), 2000);
    const r = await run.finally(() => clearInterval(cancel));
    expect(r.code, r.stderr).toBe(0);
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const rows = db.prepare("SELECT id, status, error, best_score FROM rollouts").all() as {
      status: string;
      error: string;
      best_score: number | null;
    }[];
    db.close();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.status).toBe("failed");
      expect(row.error).toMatch(/Slurm job \d+ ended CANCELLED/);
      expect(row.best_score).toBeNull();
    }
  });
});
