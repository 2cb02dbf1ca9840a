import type { Command } from "commander";
import { HoneError } from "../../errors.ts";
import { printJson } from "../output.ts";

export function registerCompare(program: Command): void {
  program
    .command("compare [experiment]")
    .description("a harness × method × benchmark grid: run an experiment file, or report on its cell records (--report)")
    .option("--out <dir>", "the experiment's folder (one run directory per cell × seed)")
    .option("--report <dir>", "report on the cell records of an experiment folder: table, --json, and <dir>/report.html")
    .option("--baseline <method>", "the method the others are compared against", "random")
    .option("--interval <kind>", "paired interval: t (Student t) or bootstrap (paired bootstrap)", "t")
    .option("--html <file>", "where to write the HTML report (default: <dir>/report.html)")
    .option("--json", "print the report as JSON (one object per cell, then the comparisons)")
    .action(async (experiment: string | undefined, opts) => {
      if (!["t", "bootstrap"].includes(opts.interval)) throw new HoneError("usage", "--interval is t or bootstrap");
      if (experiment && opts.report) throw new HoneError("usage", "give an experiment file to run, or --report <dir>, not both");
      if (opts.report) {
        const { reportFolder } = await import("../../compare/report-folder.ts");
        const { reportText } = await import("../../compare/text.ts");
        const { report, html } = reportFolder(opts.report, { baseline: opts.baseline, interval: opts.interval, html: opts.html });
        if (opts.json) printJson(report);
        else process.stdout.write(reportText(report));
        process.stderr.write(`wrote ${html}\n`);
        return;
      }
      if (!experiment)
        throw new HoneError(
          "usage",
          "give an experiment file (hone compare experiments/demo.yaml --out runs/demo) or --report <dir>",
        );
      const { readExperiment } = await import("../../compare/experiment.ts");
      const { planCells } = await import("../../compare/plan.ts");
      const exp = readExperiment(experiment);
      const cells = planCells(exp);
      throw new HoneError(
        "usage",
        `${experiment} is valid (${cells.length} cell × seed runs), but running an experiment needs the method layer (the methods and the cell runner), which this build of hone does not have yet. Report on finished cell records with \`hone compare --report <dir>\`.`,
      );
    });
}
