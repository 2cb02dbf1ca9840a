import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scoreAnswer } from "../../src/index.ts";
import { calculate } from "../../src/runtime/calculator.ts";
import { flexibleExtractFilter, gsm8kFinalAnswer, strictMatchFilter } from "../../src/task/qa/gsm8k.ts";
import { boxedAnswer, lastBoxedOnlyString, stripString } from "../../src/task/qa/hendrycks-math.ts";
import { normalizeAnswer } from "../../src/task/qa/hotpot.ts";
import { latexToText } from "../../src/task/qa/latex-text.ts";
import { pyFloat, pyRound, pySplit, pyStrip } from "../../src/task/qa/python-text.ts";
import { ROOT } from "../helpers/fixtures.ts";

interface Table {
  benchmark: string;
  cases: { response: string; gold: string; expected: Record<string, number> }[];
}
const table = (name: string): Table =>
  JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "scorers", `${name}.json`), "utf8")) as Table;

// Each table's verdicts were computed by running the official Python code (test/fixtures/scorers/README.md).
describe.each(["gsm8k", "math500", "hotpotqa"])("scoreAnswer(%s) agrees with the official code", (name) => {
  const t = table(name);
  it("on at least 60 hand-picked cases", () => expect(t.cases.length).toBeGreaterThanOrEqual(60));
  it.each(t.cases.map((c, i) => [i, c] as const))("case %i", (_i, c) => {
    expect(scoreAnswer(t.benchmark, c.response, c.gold)).toEqual(c.expected);
  });
});

describe("GSM8K filters", () => {
  it("strict-match takes the first '#### n', flexible-extract the last number-like run", () => {
    expect(strictMatchFilter("#### 18 and #### 20")).toBe("18");
    expect(strictMatchFilter("18")).toBe("[invalid]");
    expect(flexibleExtractFilter("\\boxed{18} because 4 + 14")).toBe("14");
    expect(flexibleExtractFilter("no digits")).toBe("[invalid]");
  });
  it("the oracle's answer is the text after the last '#### '", () => {
    expect(gsm8kFinalAnswer("a\n#### 1,200")).toBe("1,200");
    expect(() => gsm8kFinalAnswer("no marker")).toThrow(/#### /);
  });
  it("stays linear on a long response without the marker", () => {
    const long = "9 ".repeat(200_000);
    expect(scoreAnswer("gsm8k", long, "#### 9")).toEqual({ "strict-match": 0, "flexible-extract": 1 });
  });
});

describe("MATH extraction and normalisation", () => {
  it("last_boxed_only_string and remove_boxed", () => {
    expect(lastBoxedOnlyString("\\boxed{1} then \\boxed{\\frac{1}{2}}")).toBe("\\boxed{\\frac{1}{2}}");
    expect(boxedAnswer("\\fbox{5}")).toBeUndefined();
    expect(boxedAnswer("\\boxed{5")).toBeUndefined();
  });
  it("_strip_string raises where Python raises (a \\frac or \\sqrt with nothing after it)", () => {
    expect(() => stripString("\\sqrt")).toThrow();
    expect(() => stripString("1\\text{ a}\\text{ b}")).toThrow();
    expect(stripString("\\frac\u{1F600}2")).toBe("\\frac{\u{1F600}}{2}");
  });
  it("converts the LaTeX vocabulary PRM800K meets and refuses the rest", () => {
    expect(latexToText(" \\frac{\\sqrt{3}}{2}")).toBe(" √(3)/2");
    expect(latexToText("\\sqrt[3] {8}x \\pi  \\pi")).toBe("√(8)x ππ");
    expect(latexToText("\\mathbf{v}")).toBeUndefined();
    expect(latexToText("a~b")).toBe("a\u00a0b");
    expect(latexToText("a--b")).toBeUndefined();
    expect(latexToText("\\frac{1}")).toBe("%s/%s1");
    expect(latexToText("{\\frac}")).toBe("/");
  });
});

describe("HotpotQA normalisation is Unicode-aware like Python 3's", () => {
  it("keeps the a of Peña and removes real articles", () => {
    expect(normalizeAnswer("Peña")).toBe("peña");
    expect(normalizeAnswer("The  Eiffel Tower!")).toBe("eiffel tower");
  });
  it("Python whitespace: U+001C and U+0085 split, U+FEFF and U+200B do not", () => {
    expect(pySplit("a\x1cb\x85c\ufeffd\u200be")).toEqual(["a", "b", "c\ufeffd\u200be"]);
    expect(pyStrip("\u3000x\u00a0")).toBe("x");
  });
  it("Python's float() and round()", () => {
    expect(pyFloat(" 1_000.5 ")).toBe(1000.5);
    expect(pyFloat("\u0661\u0662")).toBe(12);
    expect(pyFloat("1__0")).toBeUndefined();
    expect(pyFloat("-Infinity")).toBe(Number.NEGATIVE_INFINITY);
    expect([pyRound(2.5), pyRound(3.5), pyRound(-2.5)]).toEqual([2, 4, -2]);
  });
});

describe("scoreAnswer", () => {
  it("names an unknown benchmark", () => expect(() => scoreAnswer("nope", "x", "y")).toThrow(/no official scorer for "nope"/));
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
