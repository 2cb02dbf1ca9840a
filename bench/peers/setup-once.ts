// One optimize run in this fresh process (no probe or thread cached from an earlier one): prints the milliseconds
// from calling optimize() to its "start" event, when the task, records, models and warm pool are ready.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_PROPOSER_HARNESS, optimize } from "../../src/loop/optimize.ts";
import { DEFAULT_HARNESS } from "../../src/loop/run.ts";

const dir = mkdtempSync(join(tmpdir(), "hone-bench-setup-"));
let setup = Number.NaN;
const t = performance.now();
await optimize(
  {
    task: "circle-packing",
    seedHarness: DEFAULT_HARNESS,
    proposerHarness: DEFAULT_PROPOSER_HARNESS,
    executor: { model: "offline" },
    proposer: { model: "offline" },
    rounds: 1,
    proposals: 1,
    maxEvals: 2,
    concurrency: 1,
    paired: false,
    seed: 0,
    noiseRepeats: 1,
    warmPool: true,
    cache: { mode: "off" },
    learning: { mode: "context", digestTokens: 2000 },
  },
  {
    outDir: join(dir, "run"),
    onEvent: (e) => {
      if (e.type === "start") setup = performance.now() - t;
    },
  },
);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ setupMs: setup })}\n`);
