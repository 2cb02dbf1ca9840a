import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  bucketize,
  extractInstruction,
  formatHistory,
  metaPromptHistory,
  newInstructions,
  OPRO_DEFAULTS,
  polish,
  type ScoredInstruction,
  temperatureAt,
} from "../../../src/method/rules/opro.ts";

const h = (text: string, score: number, step: number): ScoredInstruction => ({ text, score, step });
const HISTORY = [
  h("Let's solve the problem.", 0.6, -1),
  h("A", 0.25, 0),
  h("B", 0.8, 0),
  h("C", 0.6, 1),
  h("D", 0.735, 1),
  h("E", 0.1, 2),
  h("F", 0.3, 2),
];
const texts = (xs: ScoredInstruction[]) => xs.map((x) => x.text);

// Every expected string below was produced by running OPRO's own gen_ins_and_score_pairs_substr and _bucketize_float
// (commit e81b2f5) on the same history in a scratch script outside the repository.
describe("opro: the meta-prompt history", () => {
  it("defaults (best 20, threshold 0.3, 100 buckets): ascending, stable on ties, below-threshold pairs hidden", () => {
    const shown = metaPromptHistory(HISTORY);
    expect(texts(shown)).toEqual(["F", "Let's solve the problem.", "C", "D", "B"]);
    expect(formatHistory(shown)).toBe(
      "\ntext:\nF\nscore:\n30\n\ntext:\nLet's solve the problem.\nscore:\n60\n\ntext:\nC\nscore:\n60\n\ntext:\nD\nscore:\n74\n\ntext:\nB\nscore:\n80\n",
    );
  });
  it("the cut to the best N comes before the threshold, so fewer than N can show", () => {
    const shown = metaPromptHistory(HISTORY, { maxShown: 3, threshold: 0.7 });
    expect(formatHistory(shown)).toBe("\ntext:\nD\nscore:\n74\n\ntext:\nB\nscore:\n80\n");
  });
  it("without buckets the score is round(score, 3), printed as Python prints floats", () => {
    const shown = metaPromptHistory(HISTORY, { maxShown: 3, buckets: Number.POSITIVE_INFINITY });
    expect(formatHistory(shown, Number.POSITIVE_INFINITY)).toBe(
      "\ntext:\nC\nscore:\n0.6\n\ntext:\nD\nscore:\n0.735\n\ntext:\nB\nscore:\n0.8\n",
    );
    const ties = [h("x", 0.125, 0), h("y", 0.0625, 1), h("z", 1.0, 1)];
    expect(formatHistory(metaPromptHistory(ties, { threshold: 0 }), Number.POSITIVE_INFINITY)).toBe(
      "\ntext:\ny\nscore:\n0.062\n\ntext:\nx\nscore:\n0.125\n\ntext:\nz\nscore:\n1.0\n",
    );
  });
  it("threshold 0 disables the filter (text-bison's setting)", () => {
    expect(texts(metaPromptHistory(HISTORY, { maxShown: 5, threshold: 0 }))).toEqual([
      "F",
      "Let's solve the problem.",
      "C",
      "D",
      "B",
    ]);
  });
  it("buckets round half to even: 0.125→12, 0.005→0, 0.015→2, 0.735→74, 1→100; out of [0, 1] is refused", () => {
    expect([0.125, 0.005, 0.015, 0.735, 1.0].map((x) => bucketize(x, 100))).toEqual([12, 0, 2, 74, 100]);
    expect(() => bucketize(1.2, 100)).toThrow(/between 0 and 1/);
  });
  it("an empty history shows nothing; one candidate shows itself", () => {
    expect(formatHistory(metaPromptHistory([]))).toBe("");
    expect(formatHistory(metaPromptHistory([h("only", 0.5, 0)]))).toBe("\ntext:\nonly\nscore:\n50\n");
  });
  it("defaults are OPRO's: 20 shown, threshold 0.3, 100 buckets, 8 samples per step", () => {
    expect(OPRO_DEFAULTS).toMatchObject({ maxShown: 20, threshold: 0.3, buckets: 100, samplesPerStep: 8 });
  });
});

describe("opro: new instructions from the optimizer's samples", () => {
  it("takes the text between <INS> and </INS>, or from the start / to the end when a tag is missing", () => {
    expect(extractInstruction("Sure! <INS> think step by step </INS> done")).toBe("think step by step");
    expect(extractInstruction("think carefully</INS>")).toBe("think carefully");
    expect(extractInstruction("<INS>  be brief")).toBe("be brief");
  });
  it("polishes (strip, drop **, capitalise the first letter)", () => {
    expect(polish("  **take** a deep breath ")).toBe("Take a deep breath");
    expect(polish("a")).toBe("a");
    expect(polish("")).toBe("");
  });
  it("drops instructions seen before or earlier in the step, too long, containing INS, or (GSM8K) a digit", () => {
    const seen = new Set(["Let's solve the problem."]);
    const samples = [
      "<INS>let's solve the problem.</INS>",
      "<INS>Work backwards.</INS>",
      "<INS>work backwards.</INS>",
      `<INS>${"x".repeat(501)}</INS>`,
      "<INS>Replace INS here</INS>",
      "<INS>Use 2 steps</INS>",
    ];
    expect(newInstructions(samples, seen, { rejectDigits: true })).toEqual(["Work backwards."]);
    expect(seen.has("Use 2 steps")).toBe(true); // counted as seen even when filtered, as upstream's md5 set
    expect(newInstructions(["<INS>Use 2 steps now</INS>"], new Set())).toEqual(["Use 2 steps now"]);
  });

  it("measures the 500-character limit as Python's len does: in code points, not UTF-16 units", () => {
    const rocket = "\u{1F680}"; // two UTF-16 units, one code point
    const fits = `Go ${rocket.repeat(497)}`; // 500 code points, 997 UTF-16 units
    const over = `Go ${rocket.repeat(498)}`; // 501 code points
    expect(newInstructions([`<INS>${fits}</INS>`, `<INS>${over}</INS>`], new Set())).toEqual([fits]);
  });
  it("takes a digit as Python's str.isdigit does (superscripts, circled digits), and no other numeral", () => {
    // Every character Python's isdigit takes, from python3 itself (upstream filters with `char.isdigit()`).
    const [unicode, python] = execFileSync(
      "python3",
      [
        "-c",
        "import sys, unicodedata; print(unicodedata.unidata_version); print(''.join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isdigit()))",
      ],
      { encoding: "utf8" },
    )
      .trim()
      .split("\n") as [string, string];
    const kept = (c: string) => newInstructions([`<INS>Think ${c}</INS>`], new Set(), { rejectDigits: true }).length;
    const taken = [...python].filter((c) => kept(c) === 1);
    expect(taken.map((c) => `U+${(c.codePointAt(0) as number).toString(16)}`)).toEqual([]);
    expect([...python].length).toBeGreaterThan(600);
    // Numerals that are not digits to Python: a fraction, Roman twelve, circled ten, a CJK numeral.
    for (const c of ["\u00BD", "\u216B", "\u2469", "\u4E00"]) expect([c, kept(c)]).toEqual([c, 1]);
    // The other way, where python3 has the Unicode the port was made from (Python 3.11's 14.0.0): a decimal digit of a
    // later Unicode (Kawi's, U+11F50) is no digit to it, and kept.
    if (unicode === "14.0.0") {
      const digits = new Set(python);
      const later = [];
      for (let c = 0; c <= 0x10ffff; c++) {
        const ch = String.fromCodePoint(c);
        if (/\p{Nd}/u.test(ch) && !digits.has(ch)) later.push(ch);
      }
      expect(later.length).toBeGreaterThan(0);
      expect(later.filter((c) => kept(c) === 0)).toEqual([]);
    }
  });
  it("temperature: constant, or a linear increase t0 + step/steps·(t1 − t0)", () => {
    expect(temperatureAt(50, 200, 1.0)).toBe(1.0);
    expect(temperatureAt(50, 200, 1.0, 2.0)).toBe(1.25);
  });
});
