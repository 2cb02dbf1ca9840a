import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

// A single-node Slurm (Debian's slurm-wlm with munge, a small config on ports 6927/6928) brought up for the tests.
// Every command is bounded: a cluster that cannot come up in this environment is reported with its logs, never hangs.

const have = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;

export const slurmInstalled = () =>
  process.getuid?.() === 0 && ["slurmctld", "slurmd", "munged", "munge", "sbatch", "sinfo"].every(have);

export interface SlurmCluster {
  env: Record<string, string>;
  /** Why the cluster is not available, or null when it is up and idle. */
  unavailable: string | null;
  stop(): void;
}

function writeConfig(dir: string, conf: string, host: string): void {
  writeFileSync(
    conf,
    [
      "ClusterName=honetest",
      // Addresses given explicitly so a container whose hostname does not resolve still works.
      `SlurmctldHost=${host}(127.0.0.1)`,
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
      "MessageTimeout=5",
      "MinJobAge=600",
      `NodeName=${host} NodeAddr=127.0.0.1 NodeHostname=${host} CPUs=2 RealMemory=2000 State=UNKNOWN`,
      `PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP`,
      "",
    ].join("\n"),
  );
}

function logTail(dir: string): string {
  return ["slurmctld.log", "slurmd.log"]
    .map((f) => {
      const path = join(dir, f);
      if (!existsSync(path)) return `${f}: (none)`;
      return `${f}:\n${readFileSync(path, "utf8").split("\n").slice(-15).join("\n")}`;
    })
    .join("\n");
}

export async function startSlurm(dir: string, deadlineMs = 40_000): Promise<SlurmCluster> {
  const conf = join(dir, "slurm.conf");
  const env = { SLURM_CONF: conf };
  const fullEnv = { ...process.env, ...env };
  const stop = () => {
    spawnSync("scancel", ["--full", "-u", "root"], { env: fullEnv, timeout: 5000 });
    for (const f of ["slurmd.pid", "slurmctld.pid"]) {
      try {
        process.kill(Number(readFileSync(join(dir, f), "utf8").trim()), "SIGTERM");
      } catch {
        // already stopped, or never started
      }
    }
  };
  if (!slurmInstalled()) return { env, unavailable: "needs root and slurm-wlm + munge (.ci/run installs them)", stop };
  const deadline = Date.now() + deadlineMs;
  try {
    mkdirSync(join(dir, "state"), { recursive: true });
    mkdirSync(join(dir, "spool"), { recursive: true });
    // A socket file left by a munged that has since died is common; ask munge itself whether it answers.
    if (spawnSync("munge", ["-n"], { stdio: "ignore", timeout: 5000 }).status !== 0) {
      mkdirSync("/etc/munge", { recursive: true });
      mkdirSync("/run/munge", { recursive: true });
      if (!existsSync("/etc/munge/munge.key")) writeFileSync("/etc/munge/munge.key", Buffer.alloc(1024, 7), { mode: 0o400 });
      execFileSync("munged", ["--force"], { stdio: "ignore", timeout: 10_000 });
    }
    const host = hostname();
    writeConfig(dir, conf, host);
    execFileSync("slurmctld", ["-f", conf], { stdio: "ignore", env: fullEnv, timeout: 15_000 });
    execFileSync("slurmd", ["-f", conf, "-N", host], { stdio: "ignore", env: fullEnv, timeout: 15_000 });
  } catch (error) {
    stop();
    return { env, unavailable: `could not start: ${(error as Error).message}\n${logTail(dir)}`, stop };
  }
  let state = "";
  while (Date.now() < deadline) {
    const r = spawnSync("sinfo", ["-h", "-o", "%t"], { env: fullEnv, encoding: "utf8", timeout: 5000 });
    state = (r.stdout ?? "").trim();
    if (state === "idle") return { env, unavailable: null, stop };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  stop();
  return { env, unavailable: `node never became idle (last state "${state}")\n${logTail(dir)}`, stop };
}
