// One `hone run` rollout on a remote runner (BullMQ workers or Slurm): the job runs in a folder inside the run's
// hidden build folder, then its files take the places a local rollout's have, and its records (model responses and
// evaluations, for replay) join the run's own.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { HoneError } from "../errors.ts";
import type { RolloutOutcome } from "../runtime/rollout.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";
import { outcomeFromFiles } from "./distributed/job-data.ts";
import { type Recording, readRecordsFile } from "./recording.ts";
import { EVALUATOR_FILE } from "./rollout-records.ts";
import type { Runner } from "./runner.ts";

/**
 * The files a rollout leaves that a run directory holds at its top, as a local run writes them, and the evaluator's
 * runtime the remote machine measured under (EVALUATOR_FILE), which the run's records name for the rollout.
 */
const KEPT = (name: string) =>
  name === "trajectory.jsonl" || name === "programs" || name.startsWith("best_program") || name === EVALUATOR_FILE;

/** A rollout's result.json as a worker wrote it, refused unless it has the shape a rollout outcome has. */
function outcomeIn(dir: string, task: DiscoveryTask): RolloutOutcome {
  const file = join(dir, "result.json");
  const best = join(dir, `best_program${task.programExtension}`);
  const outcome = outcomeFromFiles(readFileSync(file, "utf8"), existsSync(best) ? readFileSync(best, "utf8") : undefined);
  if (!outcome)
    throw new HoneError("runFailed", `${file}: the remote rollout's result is not a rollout outcome (nothing was written)`);
  return outcome;
}

/** Runs the rollout as one job of `runner` and moves what it left into `partial`; an infrastructure failure throws. */
export async function remoteRollout(
  runner: Runner,
  job: { seed: number; maxEvals: number; harnessDir: string; startProgram: string; startEvaluation: Evaluation },
  o: { partial: string; task: DiscoveryTask; recording: Recording },
): Promise<RolloutOutcome> {
  const outDir = join(o.partial, "rollout");
  let error: string | undefined;
  for await (const r of runner.run([{ id: "rollout", outDir, ...job }])) error = r.error;
  if (error || !existsSync(join(outDir, "result.json")))
    throw new HoneError(
      "runFailed",
      `the rollout on the remote runner failed: ${error ?? "it left no result"} (nothing was written)`,
    );
  const outcome = outcomeIn(outDir, o.task);
  o.recording.import(readRecordsFile(outDir));
  for (const name of readdirSync(outDir)) if (KEPT(name)) renameSync(join(outDir, name), join(o.partial, name));
  rmSync(outDir, { recursive: true, force: true });
  return outcome;
}
