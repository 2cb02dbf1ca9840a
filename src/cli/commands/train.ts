import { resolve } from "node:path";
import type { Command } from "commander";
import { ExitCode } from "../../errors.ts";
import { loadHarness } from "../../harness/package.ts";
import { DEFAULT_PROPOSER_HARNESS } from "../../loop/optimize.ts";
import { GreedyMonotonic, Trainer } from "../../loop/train.ts";
import { readTrainConfig } from "../../loop/train-config.ts";
import {
  type Criterion,
  InvalidFirstAttempts,
  MeanWithConfidence,
  StepsUsed,
  StrictPareto,
  TokensUsed,
} from "../../method/criteria.ts";
import { AgentCliEstimator, type Estimator, LLMEstimator, PatchQueue } from "../../method/estimators.ts";
import { resolveModel } from "../../model/resolve.ts";
import type { DiscoveryTask } from "../../task/discovery-task.ts";
import { loadSplit } from "../../task/qa/benchmarks.ts";
import { formatScore, printJson } from "../output.ts";
import { QUEUE_HELP, queueQARunner } from "../queue-option.ts";

const toModel = (m: { model: string; base_url?: string; dialect?: "vllm" | "openai"; api_key_env?: string }) => ({
  model: m.model,
  baseUrl: m.base_url,
  dialect: m.dialect,
  apiKeyEnv: m.api_key_env,
});

export function registerTrain(program: Command): void {
  program
    .command("train")
    .description(
      "train a harness on a task panel: measure HEAD, propose one change, measure it, let a criterion promote or reject",
    )
    .requiredOption("--config <file>", "train.yaml: harness, panel, model, estimator, criterion, patch surface")
    .option("--epochs <n>", "epochs to run", Number, 5)
    .option("--out <dir>", "run directory (default: out: in the config, else runs/train-<time>)")
    .option("--queue <redis-url>", QUEUE_HELP)
    .option("--json", "print the epochs as JSON")
    .action(async (opts) => {
      const c = readTrainConfig(opts.config);
      const tasks = await loadSplit(c.panel.benchmark, c.panel.split, {
        dir: c.panel.data_dir,
        seed: c.seed,
        limit: c.panel.limit,
      });
      const criterion: Criterion =
        c.criterion.kind === "strict_pareto"
          ? new StrictPareto(
              c.criterion.secondary.map(
                (s) => ({ steps: StepsUsed, tokens: TokensUsed, invalid_first_attempts: InvalidFirstAttempts })[s],
              ),
            )
          : new MeanWithConfidence({ confidence: c.criterion.confidence, resamples: c.criterion.resamples, seed: c.seed });
      const closers: (() => Promise<void>)[] = [];
      let estimator: Estimator;
      if (c.estimator.kind === "patch_queue") estimator = new PatchQueue(c.estimator.patches);
      else if (c.estimator.kind === "agent_cli") estimator = new AgentCliEstimator(c.estimator.command, c.estimator.timeout);
      else {
        const proposer = await resolveModel(toModel(c.estimator.proposer));
        closers.push(proposer.close);
        const panelTask = {
          id: `${c.panel.benchmark}-panel`,
          description: `Answer ${c.panel.benchmark} questions correctly (${c.panel.limit} from the ${c.panel.split} split); the answers are scored by the benchmark's official rule.`,
          metric: "accuracy",
          direction: "maximize",
          budget: { maxEvals: 1 },
        } as unknown as DiscoveryTask;
        estimator = new LLMEstimator(
          proposer.model,
          loadHarness(c.estimator.proposer_harness ?? DEFAULT_PROPOSER_HARNESS),
          (d) => loadHarness(d),
          panelTask,
          c.seed,
        );
      }
      const runner = await queueQARunner(opts.queue, toModel(c.model), "train");
      if (runner) closers.push(() => runner.close());
      const optimizer = new GreedyMonotonic();
      const out = resolve(opts.out ?? c.out ?? `runs/train-${new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19)}`);
      const epochs: Record<string, unknown>[] = [];
      const trainer = new Trainer({
        dir: out,
        seedHarness: c.harness,
        panel: { benchmark: c.panel.benchmark, tasks },
        model: toModel(c.model),
        estimator,
        criterion,
        optimizer,
        patchSurface: c.patch_surface,
        concurrency: c.concurrency,
        runner,
        seed: c.seed,
        onEvent: (e) => {
          if (opts.json) return;
          if (e.type === "skip") process.stdout.write(`epoch ${e.epoch}: skipped (${e.reason})\n`);
          if (e.type === "loss") process.stdout.write(`epoch ${e.epoch}: ${e.decision} (${e.reason})\n`);
        },
      });
      if (!opts.json)
        process.stdout.write(
          `training ${c.harness} on ${tasks.length} ${c.panel.benchmark} ${c.panel.split} tasks with ${criterion.describe()}; records in ${out}\n`,
        );
      try {
        for await (const loss of trainer.epochs(opts.epochs)) {
          loss.backward();
          optimizer.step();
          const solved = (m: typeof loss.baseline) => Object.values(m.tasks).filter((t) => t.status === "solved").length;
          epochs.push({
            epoch: loss.epoch,
            decision: loss.verdict.decision,
            reason: loss.verdict.reason,
            promoted: loss.promoted,
            baseline_solved: solved(loss.baseline),
            candidate_solved: solved(loss.measured),
            candidate: loss.candidate,
            head: trainer.harness.data,
          });
          if (!opts.json)
            process.stdout.write(
              `  solved ${solved(loss.baseline)} → ${solved(loss.measured)} of ${tasks.length}; ${loss.promoted ? `promoted, HEAD ${trainer.harness.data.slice(0, 12)}` : "kept HEAD"} (loss ${formatScore(loss.value)})\n`,
            );
        }
      } finally {
        for (const cl of closers) await cl();
      }
      if (opts.json) printJson({ out, head: trainer.harness.data, head_dir: trainer.headDir(), epochs });
      else process.stdout.write(`done: HEAD ${trainer.harness.data.slice(0, 12)} (${trainer.headDir()})\n`);
      process.exitCode = ExitCode.ok;
    });
}
