import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Command } from "commander";
import { ExitCode } from "../../errors.ts";
import type { RolloutJobData } from "../../loop/distributed/job-data.ts";

/** Runs one rollout from a job file into a folder: what a Slurm job script calls. */
export function registerRolloutJob(program: Command): void {
  program
    .command("rollout-job <job-json>", { hidden: true })
    .description("run one rollout job file (written by the Slurm runner) into --out")
    .requiredOption("--out <dir>", "where the rollout is written")
    .action(async (file: string, opts) => {
      const { executeJobDataInto, WorkerCaches } = await import("../../loop/distributed/execute.ts");
      const caches = new WorkerCaches(1);
      try {
        const job = JSON.parse(readFileSync(file, "utf8")) as RolloutJobData;
        const error = await executeJobDataInto(job, opts.out, caches, `slurm job on ${hostname()}`);
        if (error) {
          process.stderr.write(`hone: ${error}\n`);
          process.exitCode = ExitCode.runFailed;
        }
      } finally {
        await caches.close();
      }
    });
}
