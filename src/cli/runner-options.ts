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

/**
 * The Slurm settings the flags ask for (only with --runner slurm); an unknown --runner, or --runner slurm with
 * --queue (two places for the same rollouts), is a usage error.
 */
export function slurmFromFlags(opts: Record<string, unknown>): SlurmSettings | undefined {
  if (opts.runner !== undefined && opts.runner !== "local" && opts.runner !== "slurm")
    throw new HoneError("usage", `--runner ${String(opts.runner)}: local or slurm (use --queue for BullMQ)`);
  if (opts.runner !== "slurm") return undefined;
  if (opts.queue !== undefined) throw new HoneError("usage", "give --queue (BullMQ workers) or --runner slurm, not both");
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
