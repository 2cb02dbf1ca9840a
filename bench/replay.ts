// Replaying a recorded optimize run against running it live on the offline model with 200 ms added latency per
// call, side by side, in one process (no start-up cost on either side).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_PROPOSER_HARNESS, type OptimizeSettings, optimize } from "../src/loop/optimize.ts";
import { DEFAULT_HARNESS } from "../src/loop/run.ts";
import { median, report } from "./lib.ts";

export async function benchReplay(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "hone-bench-replay-"));
  const settings: OptimizeSettings = {
    task: "circle-packing",
    seedHarness: DEFAULT_HARNESS,
    proposerHarness: DEFAULT_PROPOSER_HARNESS,
    executor: { model: "offline", offlineLatencyMs: 200 },
    proposer: { model: "offline", offlineLatencyMs: 200 },
    rounds: 2,
    proposalsPerRound: 4,
    maxEvals: 20,
    concurrency: 4,
    paired: false,
    seed: 0,
    warmPool: true,
    cache: { mode: "off" },
    learning: { mode: "context", digestTokens: 2000 },
  };
  let t = performance.now();
  const live = await optimize(settings, { outDir: join(dir, "live") });
  const liveSeconds = (performance.now() - t) / 1000;
  // Replays are short and noisy on a shared machine: the median of three, each into its own run directory.
  const times: number[] = [];
  let replayed = live;
  for (let i = 0; i < 3; i++) {
    t = performance.now();
    replayed = await optimize(
      { ...settings, cache: { mode: "replay" }, replayOf: join(dir, "live") },
      { outDir: join(dir, `replay-${i}`) },
    );
    times.push((performance.now() - t) / 1000);
    if (replayed.bestScore !== live.bestScore) throw new Error(`replay gave ${replayed.bestScore}, live ${live.bestScore}`);
  }
  const replaySeconds = median(times);
  rmSync(dir, { recursive: true, force: true });
  const speedup = liveSeconds / replaySeconds;
  report(
    "replay (issue 6): 2 rounds x 4 proposals, 20 evaluations per rollout (the task's budget), offline model +200 ms per call",
    [
      ["live", `${liveSeconds.toFixed(2)} s`],
      [
        "replay from the run's records (no endpoint)",
        `${replaySeconds.toFixed(2)} s median of ${times.map((x) => x.toFixed(2)).join(", ")}; same best score ${replayed.bestScore}`,
      ],
      ["speed-up", `${speedup.toFixed(1)}x`],
    ],
    { ok: speedup >= 50, text: "target: replay at least 50x faster" },
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchReplay();
