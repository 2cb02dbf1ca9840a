import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import type { OptimizeEvent, OptimizeSettings } from "../../loop/optimize.ts";
import { addModelOptions } from "../model-options.ts";
import { numberish } from "../numberish.ts";
import { formatScore, isTty, printJson, table } from "../output.ts";
import { modelCallSummary, OptimizeProgress } from "../progress.ts";
import { addRunnerOptions } from "../runner-options.ts";
import { atExit, atStop } from "../shutdown.ts";

export function registerOptimize(program: Command): void {
  const cmd = program
    .command("optimize")
    .description("learn the harness at test time: propose, gate, roll out, reward, ratchet; every candidate kept")
    .option("--task <id|folder>", "a built-in task id or a task folder")
    .option("--benchmark <id>", "a QA benchmark instead of a task (hone datasets lists them)")
    .option("--train <n>", "with --benchmark: train questions every candidate is measured on (default 40)", numberish)
    .option("--validation <n>", "with --benchmark: validation questions the final choice is measured on (default 40)", numberish)
    .option("--data-dir <dir>", "with --benchmark: where the benchmark's files are (default hone's data folder)")
    .option("--config <file>", "options from a YAML file (schemas/optimize.schema.json); flags override it")
    .option("--resume <run-dir>", "continue a stopped run (its stored options; --rounds and --concurrency may change)")
    .option("--seed-harness <dir>", "the harness to start from (default harnesses/initial)")
    .option("--proposer-harness <dir>", "the proposer's own harness (default harnesses/proposer)")
    .option("--rounds <n>", "rounds of proposals after the seed round", numberish)
    .option("--proposals <k>", "harness specs per round", numberish)
    .option("--method <name>", "the method that proposes and keeps candidates (hone methods lists them; default harnessttt)")
    .option("--param <key=value...>", "a parameter of the method (repeatable), e.g. --param proposals=2")
    .option("--max-evals <n>", "evaluator calls per rollout (default: the task's budget)", numberish)
    .option("--concurrency <n>", "rollouts at once", numberish)
    .option("--paired", "pair each candidate with a rollout of its parent at the same seed (causal credit)")
    .option(
      "--noise-repeats <n>",
      "evaluations of the seed program in round 0 to measure the evaluator's noise, and re-evaluations per comparison where it is stochastic (default 3; 1 disables)",
      numberish,
    )
    .option("--seed <n>", "run seed", numberish)
    .option("--learning <mode>", "proposer learning: context (default) or lora")
    .option("--tasks-dir <dir>", "a folder of task folders with an optional tasks.yaml")
    .option("--phase <n>", "read the task folder's config_phase_N.yaml (default: config.yaml, else the first phase)", numberish)
    .option("--cold", "spawn a fresh interpreter per evaluation instead of the warm pool")
    .option("--cache <mode>", "request cache: read-write (default), off, or replay (every request must be recorded)")
    .option("--cache-dir <dir>", "shared cache folder (default HONE_CACHE_DIR or ~/.cache/hone)")
    .option("--queue <redis-url>", "run rollouts on BullMQ workers (hone worker) through this Redis, e.g. redis://127.0.0.1:6379")
    .option("--out <dir>", "run directory (default runs/opt-<task>-<time>)")
    .option("--json", "print the final summary as JSON only");
  addRunnerOptions(cmd);
  addModelOptions(cmd, "executor");
  addModelOptions(cmd, "proposer");
  cmd.action(async (opts) => {
    const { readOptimizeConfig, settingsFromConfig } = await import("../../loop/optimize-config.ts");
    const { optionsFromFlags, refuseResumeMismatch } = await import("../optimize-flags.ts");
    const { optimize, storedSettings } = await import("../../loop/optimize.ts");
    const { runReceipt } = await import("../../loop/receipt.ts");
    const { defaultCachePath } = await import("../../model/cache.ts");
    const { resolveTask, withPhase } = await import("../../task/builtin.ts");
    const file = opts.config ? { path: opts.config as string, config: readOptimizeConfig(opts.config) } : undefined;
    if (opts.resume) {
      // Everything comes from the run's hone.db; what may change is still checked by the schema, flag by flag, and
      // any other flag given must agree with what the run was started with.
      optionsFromFlags({ rounds: opts.rounds, concurrency: opts.concurrency, task: "resume" }, undefined);
      // A queue URL's password was never stored: the URL given again stands in for the stored one.
      refuseResumeMismatch(opts, storedSettings(resolve(opts.resume), { overrides: { queue: opts.queue } }), opts.resume);
    } else if (opts.task && opts.benchmark)
      throw new HoneError("usage", "--task and --benchmark are exclusive: give a discovery task or a QA benchmark, not both");
    else if (!opts.task && !file?.config.task && !opts.benchmark && !file?.config.benchmark)
      throw new HoneError("usage", "give --task or --benchmark (or task: or benchmark: in --config), or --resume a run");
    const benchmark = !opts.resume && !opts.task && (opts.benchmark ?? file?.config.benchmark) !== undefined;
    const named = benchmark ? undefined : (opts.task ?? file?.config.task);
    const taskRef = named === undefined ? undefined : withPhase(named, opts.phase);
    const config = opts.resume
      ? optionsFromFlags({ task: "resume" }, undefined)
      : optionsFromFlags({ ...opts, task: benchmark ? undefined : taskRef }, file);
    // Only its budget and id are read here: optimize() checks what the task needs beside its own set-up, from the
    // interpreter's cached probe (a check here would probe and scan in this process first, blocking it).
    const task =
      opts.resume || benchmark ? undefined : await resolveTask(config.task as string, config.tasks_dir, { check: false });
    const s: OptimizeSettings = opts.resume
      ? storedSettings(resolve(opts.resume), { overrides: { queue: opts.queue } })
      : settingsFromConfig(config, task?.budget.maxEvals ?? 10);
    if (opts.learning === "lora" && !s.learning.lora)
      throw new HoneError("usage", "--learning lora needs learning.lora.trainer_command in --config");
    for (const [role, m] of [
      ["executor", s.executor],
      ["proposer", s.proposer],
    ] as const) {
      if (m.model !== "offline" && !m.baseUrl)
        throw new HoneError(
          "usage",
          `--${role}-base-url is needed for the ${role} model "${m.model}" (or use --${role} offline)`,
        );
    }
    const cachePath = s.cache?.dir ? join(s.cache.dir, "requests.db") : defaultCachePath();
    const cacheMode = s.cache?.mode ?? "read-write";
    const progress = opts.json
      ? undefined
      : new OptimizeProgress(isTty(), { cache: cacheMode === "off" ? undefined : cachePath });
    let atStopOff = () => {};
    const result = await optimize(s, {
      outDir: opts.resume ?? config.out,
      resume: Boolean(opts.resume),
      overrides: { rounds: opts.rounds, concurrency: opts.concurrency, queue: opts.queue },
      onEvent: (e: OptimizeEvent) => progress?.on(e),
      // A stop before the run has records leaves no folder; after, it says how to go on. Once optimize() has
      // settled, the folder is its own business (a run it abandoned may be another's by then).
      onHeld: (dir, abandon) => {
        atStopOff = atStop(() => {
          // Removed as the process exits: the set-up, still going meanwhile, could write into a folder removed sooner.
          if (!existsSync(join(dir, "hone.db"))) return atExit(abandon);
          process.stderr.write(`hone: stopped; continue the run with: npx hone optimize --resume ${opts.resume ?? dir}\n`);
        });
      },
    }).finally(() => atStopOff());
    progress?.end();
    if (opts.json) {
      printJson({
        run_dir: result.runDir,
        best_score: result.bestScore,
        start_score: result.startScore,
        best_harness: result.bestHarnessPath,
        noise: result.noise ?? null,
        ...(result.validationScore === undefined ? {} : { validation_score: result.validationScore }),
        rounds: result.rounds,
      });
    } else {
      const rows = result.rounds.map((r) => [
        r.round,
        formatScore(r.incumbentScore),
        formatScore(r.bestScore),
        r.moved ? "yes" : "no",
        r.candidates.map((c) => (c.status === "invalid" ? "x" : c.reward === null ? "-" : c.reward.toFixed(2))).join(" ") || "-",
      ]);
      process.stdout.write(`\n${table(["round", "incumbent at start", "best this round", "moved", "rewards"], rows)}\n`);
      const calls = modelCallSummary(runReceipt(result.runDir).models, { mode: cacheMode, path: cachePath });
      process.stdout.write(
        `\nbest ${formatScore(result.bestScore)} (start ${formatScore(result.startScore)})${result.validationScore === undefined ? "" : `; validation ${formatScore(result.validationScore)}`}\n  harness  ${result.bestHarnessPath}\n  records  ${result.runDir}/hone.db · lineage: npx hone log ${result.runDir}\n${calls.join("\n")}\n`,
      );
    }
    process.exitCode = ExitCode.ok;
  });
}
