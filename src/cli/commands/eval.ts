import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import type { ModelSettings } from "../../model/resolve.ts";
import { addModelOptions, modelSettingsFrom } from "../model-options.ts";
import { numberish } from "../numberish.ts";
import { printJson, table } from "../output.ts";
import { QUEUE_HELP, queueQARunner } from "../queue-option.ts";
import { atStop } from "../shutdown.ts";

export function registerEval(program: Command): void {
  const cmd = program
    .command("eval")
    .description("a harness on a benchmark split, scored by the benchmark's official rule")
    .requiredOption("--harness <dir>", "harness package (harnesses/qa for the QA solver)")
    .requiredOption("--benchmark <id>", "a benchmark (hone datasets lists them)")
    .option("--split <split>", "train, validation or test (train/validation are divided from the train file by --seed)", "test")
    .option("--limit <n>", "only the first n tasks of the split", numberish)
    .option("--data-dir <dir>", "where datasets live (default HONE_DATA_DIR or ~/.cache/hone/datasets)")
    .option("--concurrency <n>", "tasks at once", numberish, 8)
    .option("--seed <n>", "seed for sampling and splits", numberish, 0)
    .option("--samples <n>", "samples per task, each at its own seed (pass@k, and τ-bench's pass^k over trials)", numberish, 1)
    .option(
      "--out <dir>",
      "run directory: hone.db, harness/, trajectories/, summary.json (default runs/eval-<benchmark>-<split>-<time>)",
    )
    .option("--queue <redis-url>", QUEUE_HELP)
    .option("--json", "print the summary as JSON");
  addModelOptions(addModelOptions(cmd, "user")).action(async (opts) => {
    if (!["train", "validation", "test"].includes(opts.split))
      throw new HoneError("usage", "--split is train, validation or test");
    const s = modelSettingsFrom(opts);
    const user = modelSettingsFrom(opts, "user");
    const { evaluateBenchmark } = await import("../../loop/eval.ts");
    const runner = await queueQARunner(opts.queue, { ...s, model: s.model ?? "offline" }, "eval");
    let atStopOff = () => {};
    const summary = await evaluateBenchmark(
      {
        ...s,
        model: s.model ?? "offline",
        harnessDir: opts.harness,
        benchmark: opts.benchmark,
        split: opts.split,
        limit: opts.limit,
        dataDir: opts.dataDir,
        concurrency: opts.concurrency,
        seed: opts.seed,
        outDir: opts.out,
        userModel: user.model ? (user as ModelSettings) : undefined,
        samples: opts.samples,
        onNotice: (text) => process.stderr.write(`${text}\n`),
        // Stopped, an eval keeps what it measured (each answer may have cost a model call), and says where it is.
        onHeld: (dir) => {
          atStopOff = atStop(() => {
            process.stderr.write(`hone: stopped; the tasks measured so far are in ${dir} (an eval does not resume)\n`);
          });
        },
      },
      runner,
    ).finally(() => {
      atStopOff();
      return runner?.close();
    });
    if (opts.json) printJson(summary);
    else {
      const rows = summary.results.map((r) => [
        r.id,
        r.status,
        r.status === "completed" ? (r.correct ? "yes" : "no") : `error: ${r.error?.slice(0, 60)}`,
        r.extracted ?? "-",
        r.modelCalls,
      ]);
      process.stdout.write(`${table(["task", "status", "correct", "answer", "model calls"], rows)}\n\n`);
      const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
      const metrics = Object.entries(summary.metrics).map(([m, v]) => `${m} ${pct(v)}`);
      process.stdout.write(
        `${summary.harness.name} on ${summary.benchmark}/${summary.split}: ${metrics.join(", ")} (95% CI of ${summary.metric} ${pct(summary.ci95[0])}–${pct(summary.ci95[1])}) over ${summary.completed} completed of ${summary.completed + summary.failed}${summary.failed ? `; ${summary.failed} incomplete` : ""}\n  records  ${summary.outDir}/hone.db\n`,
      );
      if (summary.samples > 1) {
        const est = Object.entries({ ...summary.passAtK, ...summary.passHatK }).map(([k, v]) => `${k} ${pct(v)}`);
        process.stdout.write(`${summary.samples} samples per task: ${est.join(", ")}\n`);
      }
    }
    process.exitCode = summary.failed === 0 ? ExitCode.ok : summary.completed === 0 ? ExitCode.internal : ExitCode.incomplete;
  });
}
