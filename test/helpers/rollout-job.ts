import { DEFAULT_HARNESS } from "../../src/loop/run.ts";
import type { RolloutJob } from "../../src/loop/runner.ts";
import type { DiscoveryTask } from "../../src/task/discovery-task.ts";

/** The start evaluation the runner tests give a rollout (its score as given, never measured). */
export const SEED_START = { valid: true, score: 0.9, metrics: {}, artifacts: {}, seconds: 0 };

/** A rollout of the default harness from `task`'s seed program, one evaluation, into `outDir`. */
export function seedRollout(task: DiscoveryTask, id: string, outDir: string, seed = 0): RolloutJob {
  return {
    id,
    harnessDir: DEFAULT_HARNESS,
    startProgram: task.seedProgram,
    startEvaluation: SEED_START,
    seed,
    maxEvals: 1,
    outDir,
  };
}
