import { join } from "node:path";
import type { Command } from "commander";
import { ExitCode, HoneError } from "../../errors.ts";
import type { TrainRun } from "../../loop/train-setup.ts";
import { formatScore, printJson } from "../output.ts";
import { QUEUE_HELP } from "../queue-option.ts";
import { atExit, atStop } from "../shutdown.ts";

export function registerTrain(program: Command): void {
  program
    .command("train")
    .description(
      "train a harness on a task panel: measure HEAD, propose one change, measure it, let a criterion promote or reject",
    )
    .option("--config <file>", "train.yaml: harness, panel, model, estimator, criterion, patch surface")
    .option("--resume <run-dir>", "continue a stopped training run (kill -9 included) from its records")
    .option("--epochs <n>", "epochs to run (in all, counting those a resumed run already has)", Number, 5)
    .option("--out <dir>", "run directory (default: out: in the config, else runs/train-<time>)")
    .option("--queue <redis-url>", QUEUE_HELP)
    .option("--json", "print the epochs as JSON")
    .action(async (opts) => {
      if (!opts.config && !opts.resume) throw new HoneError("usage", "give --config train.yaml, or --resume a run directory");
      if (!(Number.isInteger(opts.epochs) && opts.epochs >= 0))
        throw new HoneError("usage", "--epochs takes a whole number of epochs in all, at least 0");
      const { readTrainConfig } = await import("../../loop/train-config.ts");
      const { openTrainRun } = await import("../../loop/train-setup.ts");
      const c = opts.config ? readTrainConfig(opts.config) : undefined;
      // Without one, openTrainRun takes the first free runs/train-<time>[-N] (a sweep's runs get one each).
      const out: string | undefined = opts.resume ?? opts.out ?? c?.out;
      const say = (text: string) => {
        if (!opts.json) process.stdout.write(`${text}\n`);
      };
      // Stopped in its set-up, a new run leaves no folder (removed as the process exits, when the set-up cannot write
      // there any more); once set up, or resumed, it says how to go on.
      let setUp = false;
      let atStopOff = () => {};
      const onHeld = (dir: string, abandon: () => void) => {
        atStopOff = atStop(() => {
          if (!setUp && !opts.resume) return atExit(abandon);
          process.stderr.write(`hone: stopped; continue the run with: npx hone train --resume ${opts.resume ?? dir}\n`);
        });
      };
      try {
        const run = await openTrainRun({
          config: c,
          out,
          resume: Boolean(opts.resume),
          queue: opts.queue,
          onEvent: (e) => {
            if (e.type === "notice") say(String(e.text));
            if (e.type === "skip") say(`epoch ${e.epoch}: skipped (${e.reason})`);
            if (e.type === "remeasure") say(`epoch ${e.epoch}: unmeasurable; measuring its ${e.tasks} crashed task(s) once more`);
            if (e.type === "loss") say(`epoch ${e.epoch}: ${e.decision} (${e.reason})`);
          },
          onHeld,
        });
        setUp = true;
        await trainEpochs(run, opts.epochs, say);
        const { trainer } = run;
        if (opts.json)
          printJson({
            out: run.out,
            head: trainer.harness.data,
            head_dir: trainer.headDir(),
            best: join(run.out, "best"),
            ...trainer.summary(),
          });
        else {
          const h = trainer.summary().held_out;
          const line = (r: { solved: number | null; score: number | null } | null) =>
            r ? `${r.solved ?? "-"} of ${h?.tasks} solved (mean ${formatScore(r.score)})` : "-";
          if (h) say(`held-out ${h.split}: seed ${line(h.seed)}, HEAD ${line(h.head)}`);
          say(`done: HEAD ${trainer.harness.data.slice(0, 12)} (${join(run.out, "best")})`);
        }
      } finally {
        atStopOff();
      }
      process.exitCode = ExitCode.ok;
    });
}

/** Runs the set-up train run `run` to `epochs` epochs in all, a line for each, then closes it. */
async function trainEpochs(run: TrainRun, epochs: number, say: (text: string) => void): Promise<void> {
  const { trainer, optimizer } = run;
  say(
    `training ${run.config.harness} on ${run.tasks} ${run.config.panel.benchmark} ${run.config.panel.split} tasks with ${run.criterion.describe()}; records in ${run.out}`,
  );
  try {
    for await (const loss of trainer.epochs(epochs)) {
      loss.backward();
      optimizer.step();
      const solved = (m: typeof loss.baseline) => Object.values(m.tasks).filter((t) => t.status === "solved").length;
      say(
        `  solved ${solved(loss.baseline)} → ${solved(loss.measured)} of ${run.tasks}; ${loss.promoted ? `promoted, HEAD ${trainer.harness.data.slice(0, 12)}` : "kept HEAD"} (loss ${formatScore(loss.value)})`,
      );
    }
  } finally {
    await run.close();
  }
}
