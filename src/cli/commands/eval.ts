import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import { evaluateBenchmark } from "../../loop/eval.ts";
import { BENCHMARKS, benchmark, fetchDataset } from "../../task/qa/benchmarks.ts";
import { addModelOptions, modelSettingsFrom } from "../model-options.ts";
import { printJson, table } from "../output.ts";
import { QUEUE_HELP, queueQARunner } from "../queue-option.ts";

export function registerEval(program: Command): void {
  const cmd = program
    .command("eval")
    .description("a harness on a benchmark split, scored by the benchmark's official rule")
    .requiredOption("--harness <dir>", "harness package (harnesses/qa for the QA solver)")
    .requiredOption("--benchmark <id>", `one of ${Object.keys(BENCHMARKS).join(", ")}`)
    .option("--split <split>", "train, validation or test (train/validation are divided from the train file by --seed)", "test")
    .option("--limit <n>", "only the first n tasks of the split", Number)
    .option("--data-dir <dir>", "where datasets live (default HONE_DATA_DIR or ~/.cache/hone/datasets)")
    .option("--concurrency <n>", "tasks at once", Number, 8)
    .option("--seed <n>", "seed for sampling and splits", Number, 0)
    .option("--out <dir>", "write per-task trajectories and summary.json here")
    .option("--queue <redis-url>", QUEUE_HELP)
    .option("--json", "print the summary as JSON");
  addModelOptions(cmd).action(async (opts) => {
    if (!["train", "validation", "test"].includes(opts.split))
      throw new HoneError("usage", "--split is train, validation or test");
    const s = modelSettingsFrom(opts);
    const runner = await queueQARunner(opts.queue, { ...s, model: s.model ?? "offline" }, "eval");
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
      },
      runner,
    ).finally(() => runner?.close());
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
      process.stdout.write(
        `${summary.harness.name} on ${summary.benchmark}/${summary.split}: accuracy ${pct(summary.accuracy)} (95% CI ${pct(summary.ci95[0])}–${pct(summary.ci95[1])}) over ${summary.completed} completed of ${summary.tasks}${summary.failed ? `; ${summary.failed} incomplete` : ""}\n`,
      );
    }
    process.exitCode = summary.failed === 0 ? ExitCode.ok : summary.completed === 0 ? ExitCode.internal : ExitCode.incomplete;
  });

  const datasets = program.command("datasets").description("benchmark data");
  datasets
    .command("fetch <id>")
    .description("download a benchmark from its canonical source with a sha256 check")
    .option("--data-dir <dir>", "where datasets live (default HONE_DATA_DIR or ~/.cache/hone/datasets)")
    .option("--base-url <url>", "download <base-url>/<file> instead of the canonical source (a mirror)")
    .action(async (id: string, opts) => {
      const dir = await fetchDataset(id, { dir: opts.dataDir, baseUrl: opts.baseUrl }).catch((err) => {
        throw explainFetchFailure(err, id, opts.baseUrl);
      });
      process.stdout.write(`${id}: downloaded and verified into ${dir}\n`);
    });
}

/** A download that could not connect says what to do: use a mirror (--base-url), or check the mirror given. */
export function explainFetchFailure(err: unknown, id: string, baseUrl: string | undefined): unknown {
  if (!(err instanceof HoneError) || err.exit !== "endpoint") return err;
  const files = benchmark(id)
    .files.map((f) => f.name)
    .join(", ");
  const hint = baseUrl
    ? `is the mirror ${baseUrl} up, and does it serve ${files}?`
    : `without a network here, put ${files} on a server you can reach and pass --base-url <its URL> (the sha256 is still checked)`;
  return new HoneError("endpoint", `${err.message}; ${hint}`);
}
