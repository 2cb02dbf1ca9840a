import type { Command } from "commander";
import { ExitCode } from "../../errors.ts";
import { addModelOptions, modelSettingsFrom } from "../model-options.ts";
import { numberish } from "../numberish.ts";
import { formatScore, isTty, printJson } from "../output.ts";
import { addRunnerOptions, slurmFromFlags } from "../runner-options.ts";
import { atExit, atStop } from "../shutdown.ts";

export function registerRun(program: Command): void {
  const cmd = program
    .command("run")
    .description("run one harness on one discovery task: a budgeted search by the executor model")
    .requiredOption("--task <id|folder>", "a built-in task id (see `hone tasks`) or a task folder")
    .option("--harness <dir>", "harness package directory (default harnesses/initial)")
    .option("--max-evals <n>", "evaluator calls for the rollout (default: the task's budget)", numberish)
    .option("--out <dir>", "run directory to create (default runs/run-<task>-<time>)")
    .option("--seed <n>", "sampling seed", numberish, 0)
    .option("--time-limit <seconds>", "wall-clock limit for the rollout", numberish)
    .option("--tasks-dir <dir>", "a folder of task folders with an optional tasks.yaml")
    .option("--phase <n>", "read the task folder's config_phase_N.yaml (default: config.yaml, else the first phase)", Number)
    .option("--cold", "spawn a fresh interpreter per evaluation instead of the warm evaluator pool")
    .option(
      "--queue <redis-url>",
      "the rollout on a BullMQ worker (hone worker) through this Redis; the seed program is evaluated here",
    )
    .option("--json", "print the result as JSON only");
  addRunnerOptions(cmd);
  addModelOptions(cmd).action(async (opts) => {
    const { DEFAULT_HARNESS, runHarness } = await import("../../loop/run.ts");
    const { withPhase } = await import("../../task/builtin.ts");
    const settings = modelSettingsFrom(opts);
    const slurm = slurmFromFlags(opts);
    const live = !opts.json;
    const result = await runHarness(opts.harness ?? DEFAULT_HARNESS, withPhase(opts.task, opts.phase), {
      ...settings,
      maxEvals: opts.maxEvals,
      outDir: opts.out,
      seed: opts.seed,
      timeLimitSec: opts.timeLimit,
      tasksDir: opts.tasksDir,
      warmPool: !opts.cold,
      queue: opts.queue,
      slurm,
      onNotice: (text) => process.stderr.write(`${text}\n`),
      // Stopped by a signal, the run leaves nothing half-written: removed as the process exits, after the stop's other
      // steps, during which the run (and what it started) could still write into a folder removed sooner.
      onPartial: (_dir, abandon) => atStop(() => atExit(abandon)),
      onEvent: live ? (e) => printEvent(e) : undefined,
    });
    if (opts.json) {
      printJson({
        status: result.status,
        best_score: result.bestScore ?? null,
        start_score: result.startScore ?? null,
        improved: result.improved,
        evaluations: result.evaluations,
        usage: result.usage,
        out_dir: result.outDir,
      });
    } else {
      const o = result.outcome;
      process.stdout.write(
        `\n${result.status === "completed" ? "done" : "FAILED"} (${o.stopReason}${o.error ? `: ${o.error}` : ""})\n` +
          `  start score  ${formatScore(result.startScore)}\n` +
          `  best score   ${formatScore(result.bestScore)}${result.improved ? "  (improved)" : ""}\n` +
          `  evaluations  ${o.evaluations.used}/${o.evaluations.budget} (${o.evaluations.invalid} invalid)\n` +
          `  model calls  ${o.usage.model_calls}, ${o.usage.total_tokens} tokens, ${o.usage.seconds.toFixed(1)} s\n` +
          `  written to   ${result.outDir}\n`,
      );
    }
    process.exitCode = result.status === "completed" ? ExitCode.ok : ExitCode.runFailed;
  });
}

function printEvent(e: Record<string, unknown>): void {
  if (e.type === "rollout_start") {
    const s = e.start_score as number | null;
    process.stdout.write(
      `rollout on ${(e.task as { id: string }).id} with ${e.model}; start score ${formatScore(s)}; budget ${e.max_evals}\n`,
    );
  } else if (e.type === "evaluation") {
    const mark = e.improved ? " new best" : "";
    const what = e.valid ? formatScore(e.score as number) : `invalid: ${String(e.reason).slice(0, 100)}`;
    const line = `  eval ${String(e.index).padStart(3)}  ${what}${mark}`;
    process.stdout.write(isTty() ? `${line}\n` : `${line}\n`);
  } else if (e.type === "model_error") {
    process.stdout.write(`  model error: ${e.message}\n`);
  } else if (e.type === "middleware") {
    process.stdout.write(`  [${e.middleware}] ${e.note}\n`);
  }
}
