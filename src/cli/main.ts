import { Command, CommanderError } from "commander";
import { ExitCode } from "../errors.ts";
import { HONE_VERSION } from "../version.ts";
import { registerCompare } from "./commands/compare.ts";
import { registerDatasets } from "./commands/datasets.ts";
import { registerDoctor } from "./commands/doctor.ts";
import { registerEval } from "./commands/eval.ts";
import { registerEvaluate } from "./commands/evaluate.ts";
import { registerHarness } from "./commands/harness.ts";
import { registerInit } from "./commands/init.ts";
import { registerLog } from "./commands/log.ts";
import { registerMethods } from "./commands/methods.ts";
import { registerModels, registerServeOffline } from "./commands/models.ts";
import { registerOptimize } from "./commands/optimize.ts";
import { registerReceipt } from "./commands/receipt.ts";
import { registerReplay } from "./commands/replay.ts";
import { registerRolloutJob } from "./commands/rollout-job.ts";
import { registerRun } from "./commands/run.ts";
import { registerTasks } from "./commands/tasks.ts";
import { registerTrain } from "./commands/train.ts";
import { registerView } from "./commands/view.ts";
import { registerWorker } from "./commands/worker.ts";
import { installMkdirGuard } from "./mkdir-guard.ts";
import { reportError } from "./output.ts";
import { installStopHandlers, readerGone } from "./shutdown.ts";
import { checkRequiredOptionsLast, refuseUnknownSubcommands } from "./unknown-command.ts";

// Before any verb makes a folder: Node's own recursive mkdirSync loops forever under /proc (mkdir-guard.ts).
installMkdirGuard();

const program = new Command()
  .name("hone")
  .description("Learn an agent's harness around a frozen model: run, measure, improve.")
  .version(HONE_VERSION)
  .showHelpAfterError()
  .exitOverride();

registerDoctor(program);
registerInit(program);
registerRun(program);
registerTasks(program);
registerModels(program);
registerHarness(program);
registerEvaluate(program);
registerOptimize(program);
registerMethods(program);
registerLog(program);
registerReplay(program);
registerReceipt(program);
registerEval(program);
registerDatasets(program);
registerTrain(program);
registerCompare(program);
registerWorker(program);
registerView(program);
registerRolloutJob(program);
registerServeOffline(program);
// `hone tasks shwo`: a mistyped subcommand of a verb that also acts alone is said so, with a suggestion.
refuseUnknownSubcommands(program);
// `hone run --taks x`: the mistyped flag is named (with a suggestion) before the required one it left missing.
checkRequiredOptionsLast(program);

// Every command stops cleanly on SIGINT/SIGTERM, and nothing it started outlives it (shutdown.ts).
installStopHandlers();
// A reader that goes away (`hone datasets | head`) is the end of the output, not a crash; a command with work under
// way stops as on a signal (shutdown.ts). A write after that finds the stream destroyed.
for (const stream of [process.stdout, process.stderr])
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE" && err.code !== "ERR_STREAM_DESTROYED") throw err;
    readerGone();
  });
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  } else {
    process.exitCode = reportError(err);
  }
}
