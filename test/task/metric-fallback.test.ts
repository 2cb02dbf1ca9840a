import { describe, expect, it } from "vitest";
import { judgeMetrics, type MetricFallback, meanOfMetrics } from "../../src/task/evaluation.ts";

const MEAN: MetricFallback = { rule: "mean", exclude: ["complexity", "diversity"] };
const NAN = { __nonfinite__: "nan" };

// Reference values: OpenEvolve's own get_fitness_score (openevolve/utils/metrics_utils.py at 411fb59), run on these
// dicts with its default feature dimensions unless another list is given.
const OPENEVOLVE_TABLE: [Record<string, unknown>, string[] | undefined, number][] = [
  [{ a: 1.0, b: 3 }, undefined, 2.0],
  [{ a: 1.0, ok: true, b: 2.0 }, undefined, 1.5],
  [{ a: 0.5, note: "text", b: 1.5 }, undefined, 1.0],
  [{ a: 2.0, complexity: 100.0, diversity: 7.0 }, undefined, 2.0],
  [{ complexity: 4.0, diversity: 2.0 }, undefined, 3.0],
  [{ a: 2.0, b: NAN, c: 4.0 }, undefined, 3.0],
  [{ a: 2.0, spread: 9.0 }, ["spread"], 2.0],
  [{ error: 0.0 }, undefined, 0.0],
  [{ combined_score: 0.25, a: 9.0 }, undefined, 0.25],
];

describe("a missing combined_score, scored as OpenEvolve scores it", () => {
  it.each(OPENEVOLVE_TABLE)("%j (features %j) → %d", (metrics, features, expected) => {
    const r = judgeMetrics(metrics, "combined_score", { rule: "mean", exclude: features ?? MEAN.exclude });
    expect(r).toMatchObject({ valid: true, score: expected });
  });

  it("leaves hone's own cascade_stage key out of the mean", () => {
    expect(meanOfMetrics({ a: 1, b: 3, cascade_stage: 2 }, [])).toBe(2);
  });

  it("refuses what OpenEvolve would score 0.0 for lack of numbers, and infinite means", () => {
    expect(judgeMetrics({ flag: true, note: "x" }, "combined_score", MEAN)).toMatchObject({
      valid: false,
      reason: expect.stringMatching(/no numeric metric to average/),
    });
    const inf = judgeMetrics({ a: 1, b: { __nonfinite__: "inf" } }, "combined_score", MEAN);
    expect(inf.valid).toBe(false);
    expect(inf.score).toBeUndefined();
  });

  it("still honours validity flags and timeouts before averaging", () => {
    expect(judgeMetrics({ a: 5, validity: 0 }, "combined_score", MEAN).valid).toBe(false);
    expect(judgeMetrics({ a: 5, timeout: true }, "combined_score", MEAN).valid).toBe(false);
  });

  it("keeps a present but broken combined_score invalid (no averaging around it)", () => {
    expect(judgeMetrics({ combined_score: NAN, a: 1 }, "combined_score", MEAN).valid).toBe(false);
    expect(judgeMetrics({ combined_score: "0.5", a: 1 }, "combined_score", MEAN).valid).toBe(false);
  });

  it("averages nothing without the fallback", () => {
    expect(judgeMetrics({ a: 1 }, "combined_score")).toMatchObject({ valid: false, reason: /has no "combined_score"/ });
  });
});
