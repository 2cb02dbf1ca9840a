import type { Command } from "commander";
import { ExitCode } from "../../errors.ts";
import { checkHarness } from "../../sandbox/check.ts";
import { resolveTask } from "../../task/builtin.ts";
import { printJson } from "../output.ts";

export function registerHarness(program: Command): void {
  const harness = program.command("harness").description("work with harness packages");
  harness
    .command("check <dir>")
    .description("validate, gate and self-test a package; explain every refusal")
    .option("--task <id|folder>", "also run the leak guard against this task's evaluator and secrets")
    .option("--json", "print the report as JSON")
    .action(async (dir: string, opts) => {
      const task = opts.task ? await resolveTask(opts.task) : undefined;
      const report = await checkHarness(dir, { task });
      if (opts.json) {
        printJson({
          ok: report.ok,
          name: report.harness?.name ?? null,
          content_hash: report.harness?.contentHash ?? null,
          problems: report.problems,
        });
      } else {
        const h = report.harness;
        if (h) {
          const custom =
            h.tools.filter((t) => t.kind === "custom").length + h.middlewares.filter((m) => m.kind === "custom").length;
          process.stdout.write(
            `${h.name}: ${h.tools.length} tools, ${h.skills.length} skills, ${h.middlewares.length} middlewares (${custom} generated)\n`,
          );
        }
        for (const p of report.problems) process.stdout.write(`  refused [${p.check}] ${p.message}\n`);
        if (!task && report.ok) process.stdout.write("  (no --task: the leak guard did not run)\n");
        process.stdout.write(
          report.ok ? "accepted\n" : `refused (${report.problems.length} problem${report.problems.length === 1 ? "" : "s"})\n`,
        );
      }
      process.exitCode = report.ok ? ExitCode.ok : ExitCode.badHarness;
    });
}
