import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HoneError } from "../../src/errors.ts";
import { evaluateBenchmark, wilson } from "../../src/loop/eval.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// `hone eval --limit 0` measured the whole split, `--limit -1` all but its last task, `--samples abc` no task at all
// (reported as a finished eval, exit 0), and `--seed abc` or `--concurrency abc` ended in a stack trace. Each is
// refused by name before anything is measured or written.

const options = (outDir: string) => ({
  harnessDir: join(ROOT, "harnesses", "qa"),
  benchmark: "gsm8k",
  split: "test" as const,
  limit: 2,
  dataDir: join(ROOT, "test", "fixtures", "datasets"),
  model: "offline",
  outDir,
});

describe("hone eval's whole-number options", () => {
  it.each([
    ["limit", 0, /limit \(--limit\) takes a whole number of at least 1; got 0/],
    ["limit", -1, /--limit.*got -1/],
    ["limit", Number.NaN, /--limit.*got NaN/],
    ["limit", 2.5, /--limit.*got 2\.5/],
    ["limit", "abc", /--limit.*got "abc"/],
    ["samples", "abc", /--samples.*got "abc"/],
    ["samples", 0, /--samples.*at least 1; got 0/],
    ["concurrency", 0, /--concurrency.*got 0/],
    ["seed", "abc", /--seed.*at least 0; got "abc"/],
    ["seed", -1, /--seed.*got -1/],
  ])("refuses %s %s, measuring nothing", async (name, value, message) => {
    const out = join(tempDir(), "out");
    const run = evaluateBenchmark({ ...options(out), [name]: value } as Parameters<typeof evaluateBenchmark>[0]);
    await expect(run).rejects.toThrow(message);
    await expect(run).rejects.toBeInstanceOf(HoneError);
    expect(existsSync(out)).toBe(false);
  });

  it("measures exactly --limit tasks when it is a whole number", async () => {
    const s = await evaluateBenchmark({ ...options(join(tempDir(), "out")), samples: 1, seed: 0, concurrency: 1 });
    expect(s.tasks).toBe(2);
    expect(s.completed).toBe(2);
  });
});

describe("hone eval's interval", () => {
  // statsmodels' proportion_confint(k, n, method="wilson") formula with z = scipy.stats.norm.ppf(0.975), in Python.
  it.each([
    [1, 20, 0.008881448800795402, 0.23613119344674205],
    [0, 5, 0, 0.43448246478317476],
    [5, 5, 0.5655175352168251, 1],
    [37, 50, 0.6044684273515117, 0.8412847250644762],
  ])("Wilson's %d of %d is statsmodels' to 1e-12", (k, n, lo, hi) => {
    const [a, b] = wilson(k, n);
    expect(Math.abs(a - lo)).toBeLessThan(1e-12);
    expect(Math.abs(b - hi)).toBeLessThan(1e-12);
  });
});
