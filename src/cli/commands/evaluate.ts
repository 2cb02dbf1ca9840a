import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import type { Evaluation } from "../../task/evaluation.ts";
import { formatScore, printJson } from "../output.ts";

export function registerEvaluate(program: Command): void {
  program
    .command("evaluate <program>")
    .description("evaluate one program on a task, exactly as a rollout would (exit 0 whether it is valid or not)")
    .requiredOption("--task <id|folder>", "a task id or folder")
    .option("--tasks-dir <dir>", "a folder of task folders with an optional tasks.yaml")
    .option("--phase <n>", "read the task folder's config_phase_N.yaml (default: config.yaml, else the first phase)", Number)
    .option("--timeout <seconds>", "per-evaluation limit (default: the task's)", Number)
    .option("--json", "print the evaluation as JSON")
    .action(async (programFile: string, opts) => {
      const { resolveTask, withPhase } = await import("../../task/builtin.ts");
      const { evaluateProgram } = await import("../../task/evaluator.ts");
      const { isolationNotice } = await import("../../task/python-env.ts");
      const task = await resolveTask(withPhase(opts.task, opts.phase), opts.tasksDir);
      let text: string;
      try {
        text = readFileSync(programFile, "utf8");
      } catch {
        throw new HoneError("usage", `cannot read the program ${programFile}`);
      }
      const notice = isolationNotice();
      if (notice) process.stderr.write(`${notice}\n`);
      const e = await evaluateProgram(task, text, { timeoutSec: opts.timeout });
      if (e.evaluatorFailed && !opts.json) throw evaluatorLoadError(task.evaluatorPath, e);
      if (opts.json) printJson({ task: task.id, metric: task.metric, direction: task.direction, ...e });
      else {
        process.stdout.write(
          e.valid
            ? `valid: ${task.metric} = ${formatScore(e.score)} (${task.direction})\n`
            : `invalid: ${e.reason}\n  (the program was evaluated; this is its result, and a rollout would record it the same way)\n`,
        );
        for (const [k, v] of Object.entries(e.metrics))
          if (k !== task.metric && typeof v !== "object") process.stdout.write(`  ${k}: ${v}\n`);
        process.stdout.write(`  ${e.seconds.toFixed(2)} s\n`);
      }
      // An invalid program is a result of the evaluation, not a failure of hone: exit 0 either way. An evaluator
      // that failed to load evaluated nothing: exit 8, as the warm pool's refusal of it.
      process.exitCode = e.evaluatorFailed ? ExitCode.evaluatorFailed : ExitCode.ok;
    });
}

/** The evaluator raised while it loaded, before the program ran: said as such, with its traceback's end. */
function evaluatorLoadError(evaluatorPath: string, e: Evaluation): HoneError {
  const traceback = typeof e.artifacts.traceback === "string" ? e.artifacts.traceback.trim().split("\n").slice(-6) : [];
  return new HoneError(
    "evaluatorFailed",
    `${e.reason} (${evaluatorPath}), so the program was not evaluated. Its traceback ends:\n${traceback.map((l) => `  ${l}`).join("\n")}\nFix the evaluator (or what it imports) and run this again.`,
  );
}
