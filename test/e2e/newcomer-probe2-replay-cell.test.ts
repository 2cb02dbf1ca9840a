import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hone } from "../helpers/cli.ts";
import { INITIAL_HARNESS, tempDir, write } from "../helpers/fixtures.ts";

// `hone replay` of any finished run: a `hone compare` cell is an optimize run that its budget stopped before its last
// round. The replay must stop where the run did, not ask the records for a round that was never made.
describe("newcomer probe 2: replaying a compare cell", () => {
  it("a cell stopped by its budget before round 1 replays exactly (exit 0)", async () => {
    const dir = tempDir();
    const experiment = join(dir, "experiment.yaml");
    write(
      experiment,
      [
        "name: tiny",
        "tasks:",
        "  - name: circle-packing",
        "    splits: { train: [circle-packing] }",
        "harnesses:",
        `  - { name: initial, path: ${JSON.stringify(INITIAL_HARNESS)} }`,
        "methods:",
        "  - method: greedy",
        "seeds: [0]",
        "executor: { model: offline }",
        "proposer: { model: offline }",
        // Round 0 spends 3 rollout evaluations and 2 for the seed's noise; round 1 would need 6 more.
        "budget: { unit: evaluator_calls, size: 6 }",
        "search: { proposals: 2, max_evals: 3, noise_repeats: 3, concurrency: 2 }",
        "repeats: 1",
        "baseline: greedy",
        "",
      ].join("\n"),
    );
    const env = { HONE_CACHE_DIR: join(dir, "cache") };
    const out = join(dir, "grid");
    const c = await hone(["compare", experiment, "--out", out, "--json"], { env });
    expect(c.code, c.stderr).toBe(0);
    const cell = join(out, "circle-packing+initial+greedy", "seed-0");
    const receipt = JSON.parse((await hone(["receipt", cell, "--json"], { env })).stdout);
    expect(receipt.settings.rounds).toBe(1);

    const r = await hone(["replay", cell, "--out", join(dir, "replay"), "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.differences).toEqual([]);
    expect(result.counts.rounds).toBe(1);
  });
});
