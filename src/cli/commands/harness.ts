import { join } from "node:path";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import { importNexau, isNexauPackage, NexauRefused, nexauNotes, writePackage } from "../../harness/formats/nexau.ts";
import { nexauExport } from "../../harness/formats/nexau-export.ts";
import { loadHarness } from "../../harness/package.ts";
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
          ...(isNexauPackage(join(dir, "agent.yaml")) ? { nexau_notes: nexauNotes(dir) } : {}),
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
        if (isNexauPackage(join(dir, "agent.yaml"))) printNotes("read as a NexAU package", nexauNotes(dir));
        for (const p of report.problems) process.stdout.write(`  refused [${p.check}] ${p.message}\n`);
        if (!task && report.ok) process.stdout.write("  (no --task: the leak guard did not run)\n");
        process.stdout.write(
          report.ok ? "accepted\n" : `refused (${report.problems.length} problem${report.problems.length === 1 ? "" : "s"})\n`,
        );
      }
      process.exitCode = report.ok ? ExitCode.ok : ExitCode.badHarness;
    });
  registerFormatVerbs(harness);
}

function printNotes(title: string, notes: string[]): void {
  if (notes.length > 0) process.stdout.write(`  ${title}:\n${notes.map((n) => `    - ${n}\n`).join("")}`);
}

/** `hone harness import` and `hone harness export`: NexAU packages (HarnessTTT's layout) in and out. */
function registerFormatVerbs(harness: Command): void {
  harness
    .command("import <dir>")
    .description("write a hone package from a NexAU package (HarnessTTT's layout); refused with every problem")
    .requiredOption("--out <dir>", "the new hone package's folder (must not exist or be empty)")
    .action((dir: string, opts: { out: string }) => {
      const r = importNexau(dir, opts.out);
      process.stdout.write(`imported ${dir} into ${r.out}\n`);
      printNotes("notes", r.notes);
      process.stdout.write(`check it with: hone harness check ${opts.out}\n`);
    });
  harness
    .command("export <dir>")
    .description("write a hone package in another system's layout, so a harness learned here moves back")
    .requiredOption("--format <format>", "the layout to write: nexau (NexAU's, as HarnessTTT runs it)")
    .requiredOption("--out <dir>", "the new package's folder (must not exist or be empty)")
    .action((dir: string, opts: { format: string; out: string }) => {
      if (opts.format !== "nexau") throw new HoneError("usage", `--format ${opts.format} is not known; the formats are: nexau`);
      const conv = nexauExport(loadHarness(dir, { generatedCode: () => {} }));
      if (conv.problems.length > 0) throw new NexauRefused(conv.problems);
      const out = writePackage(opts.out, conv.files);
      process.stdout.write(`exported ${dir} as a NexAU package into ${out}\n`);
      printNotes("notes", conv.notes);
    });
}
