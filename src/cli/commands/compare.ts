import type { Command } from "commander";
import { HoneError } from "../../errors.ts";
import { printJson } from "../output.ts";
import { addRunnerOptions, slurmFromFlags } from "../runner-options.ts";

export function registerCompare(program: Command): void {
  const cmd = program
    .command("compare [experiment]")
    .description("a harness × method × benchmark grid: run an experiment file, or report on its cell records (--report)")
    .option("--out <dir>", "the experiment's folder (one run directory per cell × seed)")
    .option("--report <dir>", "report on the cell records of an experiment folder: table, --json, and <dir>/report.html")
    .option("--baseline <method>", "the method the others are compared against (default: the file's baseline, or random)")
    .option("--interval <kind>", "paired interval: t (Student t) or bootstrap (paired bootstrap)", "t")
    .option("--html <file>", "where to write the HTML report (default: <dir>/report.html)")
    .option("--json", "print the report as JSON (one object per cell, then the comparisons)")
    .option("--cells <n>", "cell × seed runs at once (each runs its own rollouts at search.concurrency)", Number, 2)
    .option("--queue <redis-url>", "every cell's rollouts (search and test) on BullMQ workers (hone worker) through this Redis");
  addRunnerOptions(cmd);
  cmd.action(async (experiment: string | undefined, opts) => {
    if (!["t", "bootstrap"].includes(opts.interval)) throw new HoneError("usage", "--interval is t or bootstrap");
    if (experiment && opts.report) throw new HoneError("usage", "give an experiment file to run, or --report <dir>, not both");
    if (opts.report) {
      const { reportFolder } = await import("../../compare/report-folder.ts");
      const { reportText } = await import("../../compare/text.ts");
      const { report, html } = reportFolder(opts.report, {
        baseline: opts.baseline,
        interval: opts.interval,
        html: opts.html,
      });
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
    const { runExperiment } = await import("../../compare/run-experiment.ts");
    const { reportFolder } = await import("../../compare/report-folder.ts");
    const { reportText } = await import("../../compare/text.ts");
    const { METHODS } = await import("../../method/registry.ts");
    if (!Number.isInteger(opts.cells) || opts.cells < 1) throw new HoneError("usage", "--cells is a whole number, at least 1");
    const exp = readExperiment(experiment, { methods: Object.keys(METHODS) });
    const out = opts.out ?? exp.out;
    if (!out) throw new HoneError("usage", `give --out <dir> (or out: in ${experiment}) for the experiment's folder`);
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const slurm = slurmFromFlags(opts);
    const ran = await runExperiment(exp, { out, cells: opts.cells, queue: opts.queue, slurm, log });
    log(`${ran.ran} cell × seed runs made, ${ran.skipped} already finished, in ${ran.out}`);
    const { report, html } = reportFolder(ran.out, {
      baseline: opts.baseline ?? exp.baseline,
      interval: opts.interval,
      html: opts.html,
    });
    if (opts.json) printJson(report);
    else process.stdout.write(reportText(report));
    log(`wrote ${html}`);
  });
}
