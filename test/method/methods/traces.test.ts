import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { traceEvents } from "../../../src/method/methods/traces.ts";
import { tempDir } from "../../helpers/fixtures.ts";

// The same rollout written by two runs (the recorded one and its replay): only the clock and the transport differ.
const events = (run: { t: number; port: number; cached: boolean; latency: number; seconds: number }) => [
  { t: run.t, type: "rollout_start", model: `http://127.0.0.1:${run.port}/v1#offline`, seed: 7, max_evals: 3 },
  {
    t: run.t + 1,
    type: "model_call",
    iteration: 1,
    attempts: run.cached ? 0 : 1,
    cached: run.cached,
    latency_ms: run.latency,
    usage: { prompt_tokens: 5 },
  },
  { t: run.t + 2, type: "evaluation", index: 1, valid: true, score: 0.9, metrics: { ratio: 0.35 } },
  { t: run.t + 3, type: "rollout_end", status: "completed", best_score: 0.9, usage: { seconds: run.seconds, model_calls: 1 } },
];

function written(run: Parameters<typeof events>[0]) {
  const path = join(tempDir(), "trajectory.jsonl");
  writeFileSync(
    path,
    `${events(run)
      .map((e) => JSON.stringify(e))
      .join("\n")}\n`,
  );
  return traceEvents(path);
}

describe("a trace as a method reads it", () => {
  it("is the same for a run and its replay: no clock, retries, cache flag, latency or endpoint address", () => {
    const recorded = written({ t: 62, port: 43501, cached: false, latency: 91.3, seconds: 0.65 });
    const replayed = written({ t: 29, port: 1, cached: true, latency: 0, seconds: 0.04 });
    expect(replayed).toEqual(recorded);
    expect(recorded).toEqual([
      { type: "rollout_start", model: "offline", seed: 7, max_evals: 3 },
      { type: "model_call", iteration: 1, usage: { prompt_tokens: 5 } },
      { type: "evaluation", index: 1, valid: true, score: 0.9 },
      { type: "rollout_end", status: "completed", best_score: 0.9, usage: { model_calls: 1 } },
    ]);
  });
});
