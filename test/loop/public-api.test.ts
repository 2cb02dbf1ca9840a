import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as hone from "../../src/index.ts";
import { offlineOptimizeSettings, tempDir } from "../helpers/fixtures.ts";

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

  it("optimize runs from TypeScript and hands back the best harness and a way to write the best program", async () => {
    const out = join(tempDir(), "run");
    const r = await hone.optimize(offlineOptimizeSettings(), { outDir: out });
    expect(r.bestHarnessPath).toBe(join(out, "best"));
    expect(r.bestScore).toBeGreaterThanOrEqual(r.startScore as number);
    const program = join(tempDir(), "best.py");
    r.writeBestProgram(program);
    expect(readFileSync(program, "utf8")).toMatch(/EVOLVE-BLOCK-START/);
    expect(hone.loadHarness(r.bestHarnessPath).name).toBeTruthy();
  });
});
