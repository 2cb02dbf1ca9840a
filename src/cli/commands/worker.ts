import type { Command } from "commander";
import { HoneError } from "../../errors.ts";
import { keyEnvFrom } from "../model-options.ts";
import { atStop, stopPolicy } from "../shutdown.ts";

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description(
      "run rollouts from a BullMQ queue on Redis (start one per machine); API keys come from this machine's environment",
    )
    .requiredOption("--queue <redis-url>", "the coordinator's Redis, e.g. redis://queue.example.org:6379")
    .option("--concurrency <n>", "rollouts at once", Number, 4)
    .option(
      "--api-key-env <names...>",
      "the environment variables a job may name for its executor's API key (default OPENAI_API_KEY); a job naming another is refused",
    )
    .option("--pool-size <n>", "warm evaluator processes per task (default: min(4, concurrency), as the local pool)", Number)
    .option(
      "--lock-duration-ms <ms>",
      "a job's lock, at least 1000; a job of a worker that died returns to the queue after this",
      Number,
      30_000,
    )
    .option(
      "--stop-timeout <seconds>",
      "on SIGINT/SIGTERM, how long to finish the jobs in hand before returning them to the queue",
      Number,
      30,
    )
    .action(async (opts) => {
      if (!(opts.stopTimeout >= 0)) throw new HoneError("usage", "--stop-timeout takes a number of seconds");
      if (opts.poolSize !== undefined && !(Number.isInteger(opts.poolSize) && opts.poolSize >= 1))
        throw new HoneError("usage", "--pool-size takes a whole number of evaluator processes, at least 1");
      const { startWorker } = await import("../../loop/distributed/bullmq-worker.ts");
      const w = await startWorker({
        url: opts.queue,
        concurrency: opts.concurrency,
        poolSize: opts.poolSize,
        lockDurationMs: opts.lockDurationMs,
        apiKeyEnvs: (opts.apiKeyEnv as string[] | undefined)?.map((name) => keyEnvFrom(name, "api-key-env") as string),
        onEvent: (t) => process.stdout.write(`${t}\n`),
      });
      // Serves until asked to stop; a clean stop exits 0, whatever state Redis is in.
      stopPolicy({ graceMs: opts.stopTimeout * 1000 + 10_000, exitCode: 0 });
      atStop(async () => {
        await w.close(opts.stopTimeout * 1000);
        process.stdout.write("worker stopped\n");
      });
    });
}
