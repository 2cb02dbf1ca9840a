import type { Command } from "commander";
import { startWorker } from "../../loop/distributed/bullmq.ts";

export function registerWorker(program: Command): void {
  program
    .command("worker")
    .description(
      "run rollouts from a BullMQ queue on Redis (start one per machine); API keys come from this machine's environment",
    )
    .requiredOption("--queue <redis-url>", "the coordinator's Redis, e.g. redis://queue.example.org:6379")
    .option("--concurrency <n>", "rollouts at once", Number, 4)
    .option(
      "--lock-duration-ms <ms>",
      "a job's lock; a job of a worker that died returns to the queue after this",
      Number,
      30_000,
    )
    .action(async (opts) => {
      const w = await startWorker({
        url: opts.queue,
        concurrency: opts.concurrency,
        lockDurationMs: opts.lockDurationMs,
        onEvent: (t) => process.stdout.write(`${t}\n`),
      });
      await new Promise<void>((resolve) => {
        const stop = () => w.close().then(resolve);
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
}
