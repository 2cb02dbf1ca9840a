import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as hone from "../../src/index.ts";
import { gateGeneratedCode } from "../../src/sandbox/check.ts";
import { tempDir } from "../helpers/fixtures.ts";

describe("the public TypeScript API (package entry)", () => {
  it("exports what the README shows: runHarness, optimize, Trainer with its criteria and optimizer, eval, the console", () => {
    for (const name of [
      "runHarness",
      "optimize",
      "Trainer",
      "StrictPareto",
      "MeanWithConfidence",
      "GreedyMonotonic",
      "evaluateBenchmark",
      "startConsole",
      "runReceipt",
    ])
      expect(typeof (hone as Record<string, unknown>)[name], name).toBe("function");
  });

  it("optimize runs from TypeScript with a task and models (the rest defaults) and hands back the best harness", async () => {
    const out = join(tempDir(), "run");
    // Only the sizes are made small for the test; every other setting is the schema's default.
    const small = { rounds: 1, proposals: 2, maxEvals: 3, noiseRepeats: 1, cache: { mode: "off" as const } };
    const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
    const r = await hone.optimize({ task: "circle-packing", ...models, ...small }, { outDir: out });
    expect(r.bestHarnessPath).toBe(join(out, "best"));
    expect(r.bestScore).toBeGreaterThanOrEqual(r.startScore as number);
    const program = join(tempDir(), "best.py");
    r.writeBestProgram(program);
    expect(readFileSync(program, "utf8")).toMatch(/EVOLVE-BLOCK-START/);
    expect(hone.loadHarness(r.bestHarnessPath, { generatedCode: gateGeneratedCode }).name).toBeTruthy();
  });
});
