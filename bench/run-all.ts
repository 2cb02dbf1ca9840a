// npm run bench: every benchmark, each printing its figures side by side in one run.
import { benchConsole } from "./console.ts";
import { quiesce } from "./lib.ts";
import { benchQueue } from "./queue.ts";
import { benchReplay } from "./replay.ts";
import { benchRequestKeys } from "./request-keys.ts";
import { benchRolloutConcurrency } from "./rollout-concurrency.ts";
import { benchSandbox } from "./sandbox.ts";
import { benchScaling } from "./scaling.ts";
import { benchSearchReplace } from "./search-replace.ts";
import { benchStartup } from "./startup.ts";
import { benchStepOverhead } from "./step-overhead.ts";
import { benchWarmPool } from "./warm-pool.ts";

const only = process.argv[2];
const benches: Record<string, () => Promise<unknown>> = {
  startup: benchStartup,
  "step-overhead": benchStepOverhead,
  sandbox: benchSandbox,
  "search-replace": benchSearchReplace,
  "request-keys": benchRequestKeys,
  "warm-pool": benchWarmPool,
  "rollout-concurrency": benchRolloutConcurrency,
  replay: benchReplay,
  queue: benchQueue,
  scaling: benchScaling,
  console: benchConsole,
};
for (const [name, run] of Object.entries(benches)) {
  if (only && only !== name) continue;
  await run();
  // What the bench wrote reaches the disk now, untimed, not while the next one measures the machine's CPU.
  if (!only) await quiesce();
}
