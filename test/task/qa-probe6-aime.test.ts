import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scoreAnswer } from "../../src/index.ts";
import { isEquiv } from "../../src/task/qa/hendrycks-math.ts";
import { pyIntParses } from "../../src/task/qa/python-text.ts";
import { ROOT } from "../helpers/fixtures.ts";

interface Table {
  cases: { response: string; gold: string; expected: { exact_match: number } }[];
}
// Verdicts of lm-evaluation-harness's lm_eval/tasks/aime/utils.py process_results (test/fixtures/scorers/README.md).
const t = JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "scorers", "aime.json"), "utf8")) as Table;

describe.each(["aime2024", "aime2025"])("scoreAnswer(%s) agrees with lm-evaluation-harness's aime tasks", (benchmark) => {
  it.each(t.cases.map((c, i) => [i, c] as const))("case %i", (_i, c) => {
    expect(scoreAnswer(benchmark, c.response, c.gold)).toEqual(c.expected);
  });
});

describe("AIME, as lm-eval reads a response", () => {
  const score = (r: string, g = "33") => scoreAnswer("aime2024", r, g).exact_match;
  it("takes the text between dollar signs, and 'k = ' answers", () => {
    expect([score("The answer is $33$."), score("k = 33"), score("\\boxed 33$ so")]).toEqual([1, 1, 1]);
  });
  it("compares strings after strip_string: a leading zero or a decimal point is wrong", () => {
    expect([score("\\boxed{033}"), score("\\boxed{33.0}"), score("\\boxed{33}")]).toEqual([0, 0, 1]);
  });
  it("lets the ValueError of int('x') in fix_a_slash_b fall back to comparing raw strings", () => {
    expect(score("\\boxed{x / 2}", "x/2")).toBe(0);
    expect(isEquiv("x / 2", "x/2", true)).toBe(false);
    expect(isEquiv("x / 2", "x/2")).toBe(true); // Hendrycks' own catches everything (math500)
    expect(isEquiv("1 / 2", "\\frac12", true)).toBe(true);
  });
  it("reads int() as Python does", () => {
    expect(["7", " -7 ", "1_0", "٣", "+0"].map(pyIntParses)).toEqual([true, true, true, true, true]);
    expect(["", "x", "1__0", "_1", "1.0", "\x1c1"].map(pyIntParses)).toEqual([false, false, false, false, false, false]);
  });
});
