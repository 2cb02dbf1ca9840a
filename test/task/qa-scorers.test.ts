import { describe, expect, it } from "vitest";
import { calculate } from "../../src/runtime/calculator.ts";
import {
  gsm8kFlexible,
  gsm8kGold,
  gsm8kStrict,
  hotpotExactMatch,
  hotpotF1,
  lastBoxed,
  normalizeAnswer,
  normalizeMath,
  scoreGsm8k,
  scoreMath,
} from "../../src/task/qa/scorers.ts";

describe("GSM8K", () => {
  it("takes the gold after '#### ' with commas removed", () => {
    expect(gsm8kGold("Janet sells 16 - 3 - 4 = 9 eggs.\n#### 18")).toBe("18");
    expect(gsm8kGold("...\n#### 1,200")).toBe("1200");
    expect(() => gsm8kGold("no marker")).toThrow();
  });
  it.each([
    ["So she makes #### 18", "18", true, true],
    ["The answer is $1,200.", "1200", true, false],
    ["First 3, then 7, finally 18.", "18", true, false],
    ["\\boxed{18} because 4 + 14", "18", true, false],
    ["#### 18.00", "18", true, true],
    ["I think 17", "18", false, false],
    ["no number here", "18", false, false],
    ["#### -5", "-5", true, true],
  ])("%j vs %s → flexible %s, strict %s", (response, gold, flexible, strict) => {
    const r = scoreGsm8k(response, gold);
    expect(r.correct).toBe(flexible);
    expect(r.strict).toBe(strict);
  });
  it("extracts strictly and flexibly", () => {
    expect(gsm8kStrict("x #### 42")).toBe("42");
    expect(gsm8kStrict("42")).toBeUndefined();
    expect(gsm8kFlexible("a 1 b 2.5 c")).toBe("2.5");
  });
});

describe("MATH-500", () => {
  it("finds the last \\boxed{} with balanced braces", () => {
    expect(lastBoxed("\\boxed{1} then \\boxed{\\frac{1}{2}}")).toBe("\\frac{1}{2}");
    expect(lastBoxed("none")).toBeUndefined();
  });
  it.each([
    ["\\boxed{\\dfrac{1}{2}}", "\\frac12", true],
    ["\\boxed{0.5}", "\\frac{1}{2}", true],
    ["\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}", "\\left( 3, \\frac{\\pi}{2} \\right)", true],
    ["\\boxed{10\\%}", "10", true],
    ["\\boxed{90^\\circ}", "90", true],
    ["\\boxed{x = 5}", "5", true],
    ["\\boxed{\\$ 12}", "12", true],
    ["\\boxed{5.0}", "5", true],
    ["\\boxed{5.5}", "5", false],
    ["\\boxed{\\frac{2}{4}}", "\\frac{1}{2}", false],
    ["no box 7", "7", false],
  ])("%s vs %s → %s", (response, gold, correct) => {
    expect(scoreMath(response, gold).correct).toBe(correct);
  });
  it("normalises like the Hendrycks strip_string", () => {
    expect(normalizeMath("\\text{ cm} 5")).toBe("\\text{cm}5");
    expect(normalizeMath("3/4")).toBe("\\frac{3}{4}");
  });
});

describe("HotpotQA", () => {
  it("normalises: lowercase, no punctuation, no articles, single spaces", () => {
    expect(normalizeAnswer("The  Eiffel Tower!")).toBe("eiffel tower");
  });
  it("exact match and token F1", () => {
    expect(hotpotExactMatch("the Eiffel tower", "Eiffel Tower")).toBe(true);
    expect(hotpotF1("Eiffel Tower in Paris", "Eiffel Tower")).toBeCloseTo((2 * (2 / 4) * 1) / (2 / 4 + 1), 12);
    expect(hotpotF1("yes", "no")).toBe(0);
    expect(hotpotF1("yes it is", "yes")).toBe(0);
    expect(hotpotF1("abc", "xyz")).toBe(0);
  });
});

describe("calculator (a parser, never eval)", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["2 ^ 3 ^ 2", 512],
    ["-4 + 10 / 4", -1.5],
    ["1,200 / 3", 400],
    ["7 % 3", 1],
  ])("%s = %s", (e, v) => expect(calculate(e)).toBe(v));
  it.each(["process.exit()", "1 +", "2 ** 3", "1/0", "(1", ""])("refuses %j", (e) => expect(() => calculate(e)).toThrow());
});
