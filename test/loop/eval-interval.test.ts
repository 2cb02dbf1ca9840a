import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluateBenchmark, wilson } from "../../src/loop/eval.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// Samples of one question are not independent trials: the oracle answers each of 5 questions in all 4 of its samples,
// which is 5 questions' worth of evidence, not 20. Before, the interval was Wilson's over the 20 samples (83.9%–100%).
describe("hone eval's interval with several samples per question", () => {
  it("counts each question once: 5 of 5 questions solved in every sample is Wilson's 5 of 5", async () => {
    const s = await evaluateBenchmark({
      harnessDir: join(ROOT, "harnesses", "oracle"),
      benchmark: "gsm8k",
      split: "test",
      limit: 5,
      dataDir: join(ROOT, "test", "fixtures", "datasets"),
      model: "offline",
      samples: 4,
      outDir: join(tempDir(), "eval"),
    });
    expect(s.completed).toBe(20);
    expect(s.accuracy).toBe(1);
    expect(s.ci95).toEqual(wilson(5, 5));
    // Wilson by hand with z = 1.96: (p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n) = 0.5655 for 5 of 5
    expect(s.ci95[0]).toBeCloseTo(0.5655, 4);
  });

  it("is Wilson's over the tasks with one sample per task, as before", async () => {
    const s = await evaluateBenchmark({
      harnessDir: join(ROOT, "harnesses", "oracle"),
      benchmark: "gsm8k",
      split: "test",
      limit: 6,
      dataDir: join(ROOT, "test", "fixtures", "datasets"),
      model: "offline",
      outDir: join(tempDir(), "eval"),
    });
    expect(s.ci95).toEqual(wilson(6, 6));
  });
});
