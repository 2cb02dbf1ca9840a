import { resolve } from "node:path";
import type { Command } from "commander";
import { HoneError } from "../errors.ts";
import { checkSlurmRun, type SlurmSettings } from "../loop/distributed/slurm-script.ts";
import { numberish } from "./numberish.ts";

/** `--runner` and the Slurm flags, for every command whose rollouts may run as sbatch jobs (optimize, compare). */
export function addRunnerOptions(cmd: Command): Command {
  return cmd
    .option("--runner <kind>", "where rollouts run: local (default) or slurm (each rollout an sbatch job)")
    .option("--slurm-partition <name>", "sbatch --partition")
    .option("--slurm-gres <gres>", "sbatch --gres, e.g. gpu:1")
    .option("--slurm-time <minutes>", "sbatch --time per rollout job", numberish)
    .option("--slurm-template <file>", "job script template with {{name}}, {{output}}, {{directives}}, {{command}}");
}

/** The Slurm flags by their option key: each means nothing without --runner slurm. */
const SLURM_FLAGS = {
  slurmPartition: "--slurm-partition",
  slurmGres: "--slurm-gres",
  slurmTime: "--slurm-time",
  slurmTemplate: "--slurm-template",
};

/**
 * The Slurm settings the flags ask for (with --runner slurm, or over a config file's `slurm:` section: `configured`);
 * an unknown --runner, --runner slurm with --queue (two places for the same rollouts), or a --slurm-* flag where
 * the rollouts run on this machine, is a usage error.
 */
export function slurmFromFlags(opts: Record<string, unknown>, configured = false): SlurmSettings | undefined {
  if (opts.runner !== undefined && opts.runner !== "local" && opts.runner !== "slurm")
    throw new HoneError("usage", `--runner ${String(opts.runner)}: local or slurm (use --queue for BullMQ)`);
  // A config file's `slurm:` section sends the rollouts to Slurm as --runner slurm does; the flags then refine it.
  const onSlurm = opts.runner === "slurm" || (opts.runner === undefined && configured);
  if (!onSlurm) {
    // Without --runner slurm they would be dropped, and every rollout run on this machine (a cluster's login node).
    const given = Object.entries(SLURM_FLAGS)
      .filter(([key]) => opts[key] !== undefined)
      .map(([, flag]) => flag);
    if (given.length > 0)
      throw new HoneError(
        "usage",
        `${given.join(", ")} ${given.length > 1 ? "are" : "is"} for Slurm jobs: add --runner slurm (without it the rollouts run on this machine)`,
      );
    return undefined;
  }
  if (opts.runner === "slurm" && opts.queue !== undefined)
    throw new HoneError("usage", "give --queue (BullMQ workers) or --runner slurm, not both");
  const time = opts.slurmTime;
  if (time !== undefined && !(Number.isInteger(time) && (time as number) >= 1))
    throw new HoneError("usage", `--slurm-time is whole minutes, at least 1, not "${String(time)}"`);
  const settings = {
    partition: opts.slurmPartition as string | undefined,
    gres: opts.slurmGres as string | undefined,
    timeMinutes: time as number | undefined,
    template: typeof opts.slurmTemplate === "string" ? resolve(opts.slurmTemplate) : undefined,
  };
  checkSlurmRun(settings);
  return settings;
}
