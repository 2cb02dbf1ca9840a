import { describe, expect, it } from "vitest";
import { MeanWithConfidence, type Measurement } from "../../src/method/criteria.ts";

/** A measurement whose task i has score scores[i] (solved at 1). */
const scored = (scores: number[]): Measurement => ({
  commit: "x",
  tasks: Object.fromEntries(
    scores.map((s, i) => [`t${i}`, { status: s >= 1 ? "solved" : "unsolved", score: s, steps: 1, tokens: 1 }]),
  ),
});

describe("MeanWithConfidence: the sign test must agree in the direction of a gain", () => {
  it("rejects a mean gain carried by a few tasks while significantly more tasks lost", () => {
    // 15 of 50 tasks gain 0.5, 35 lose 0.01: the mean rises (+0.143, bootstrap interval above 0), but the sign test is
    // significant (p ≈ 0.0066) because the candidate lost on 35 of 50: it disagrees with a promotion.
    const base = Array(50).fill(0.5);
    const cand = base.map((b, i) => (i < 15 ? b + 0.5 : b - 0.01));
    const v = new MeanWithConfidence().compare(scored(cand), scored(base));
    expect((v.report.interval as number[])[0]).toBeGreaterThan(0);
    expect(v.report.sign_test_p as number).toBeLessThan(0.05);
    expect(v.decision).toBe("reject");
    expect(v.reason).toMatch(/15 of 50/);
  });

  it("still promotes when most differing tasks gained and the sign test is significant", () => {
    const base = Array(20).fill(0.4);
    const cand = base.map((b, i) => (i < 17 ? b + 0.2 : b - 0.05));
    const v = new MeanWithConfidence().compare(scored(cand), scored(base));
    expect(v.decision).toBe("promote");
  });
});
