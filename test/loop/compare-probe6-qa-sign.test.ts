import { describe, expect, it } from "vitest";
import { clearsPairedNoise } from "../../src/loop/qa-noise.ts";

// Partial-credit scores (F1): 15 of 50 questions gain 0.5, 35 lose 0.01. The mean rises and its 95% t interval lies
// above 0, and the sign test is significant (p ≈ 0.0066), but towards losses: it does not agree with a promotion.
const incumbent = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`q${i}`, 0.5]));
const candidate = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`q${i}`, i < 15 ? 1 : 0.49]));

describe("the QA noise margin's sign test agrees only towards gains", () => {
  it("does not promote a mean gain over significantly more lost questions", () => {
    const c = clearsPairedNoise(candidate, incumbent, { noise: true });
    expect(c.interval[0]).toBeGreaterThan(0);
    expect(c.better).toBe(false);
    expect(c.reason).toContain("only 15 of 50 differing questions gained");
  });

  it("promotes when most differing questions gained", () => {
    const mostly = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`q${i}`, i < 35 ? 1 : 0.49]));
    expect(clearsPairedNoise(mostly, incumbent, { noise: true }).better).toBe(true);
  });
});
