import { HoneError } from "../errors.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import type { Evaluation } from "../task/evaluation.ts";

// Reasons that say the evaluator itself is broken rather than the program invalid: it failed to load, raised, died
// without a result, returned no score, or returned a score that is not a finite number (NaN, inf, a string).
const BROKEN = [
  /the evaluator raised/,
  /the evaluator failed to load/,
  /without a result/,
  /has no "/,
  /not a finite number|is not finite|not a number/,
];

/** Throws exit 8 when the evaluation of the task's own seed program shows the evaluator is broken. */
export function assertEvaluatorWorks(task: DiscoveryTask, seed: Evaluation): void {
  if (seed.valid || !seed.reason || !BROKEN.some((re) => re.test(seed.reason as string))) return;
  throw new HoneError(
    "evaluatorFailed",
    `the evaluator failed on the seed program ${task.seedPath}: ${seed.reason}. Fix ${task.evaluatorPath} (run \`hone evaluate --task ${task.dir} ${task.seedPath}\` to see it).`,
  );
}
