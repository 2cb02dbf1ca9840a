import { describe, expect, it } from "vitest";
import { latexToText } from "../../src/task/qa/latex-text.ts";
import { gradeAnswerWithoutSympy } from "../../src/task/qa/prm800k.ts";

/**
 * latex-text.ts against pylatexenc 2.10's `LatexNodes2Text().latex_to_text` (what PRM800K's grader calls): where
 * the port gives a text it must be pylatexenc's; outside its vocabulary it gives undefined. Each expected text
 * below is pylatexenc's own output for the input.
 */
const PYLATEXENC: [string, string][] = [
  // A macro's name is every letter Python's str.isalpha accepts: "\piπ" is one unknown macro, rendered as nothing.
  ["\\piπ", ""],
  ["\\cdotπ", ""],
  // \text, \textbf, \mathrm, … take an argument: a bare macro after them is that argument, without its own.
  ["\\text\\frac12", "%s/%s12"],
  ["\\textbf{\\frac{1}{2}}", "1/2"],
  ["\\textit\\textup\\pm", "±"],
  // A special token ('' --) is one argument.
  ["\\mbox''x", "x"],
  ["\\texttt--y", "y"],
  // "\\" takes an optional [..] and "*", \hspace an optional "*".
  ["a\\\\[2pt]b", "a\nb"],
  ["\\hspace*\\Sigma\\mu", "μ"],
  // Python's whitespace after a macro's name (here a no-break space) is skipped before its argument.
  ["\\texttt\u00a0π", ""],
  // $ is math mode and % a comment.
  ["$x$", "x"],
  ["a%b\nc", "a\nc"],
  // Matrix environments: cells right-justified to the widest, rows joined by "; ".
  ["\\begin{pmatrix} 3 \\\\ -1 \\end{pmatrix}", "[  3; -1 ]"],
  ["x=\\begin{bmatrix} 1 & \\frac{1}{2} \\\\ \\pi & 0 \\end{bmatrix}.", "x=[   1 1/2;   π   0 ]."],
  ["\\begin{pmatrix} 1 \\\\ 2 \\\\ \\end{pmatrix}", "[ 1; 2;   ]"],
  ["\\begin{pmatrix} 1 \\\\ 2", "[ 1; 2 ]"],
];

describe("latexToText agrees with pylatexenc or declines", () => {
  it.each(PYLATEXENC)("%j", (input, text) => {
    const got = latexToText(input);
    if (got !== undefined) expect(got).toBe(text);
  });

  it("still renders its vocabulary", () => {
    expect(latexToText("\\text{cm}\\,\\frac{\\sqrt{3}}{2}")).toBe("cm √(3)/2");
    expect(latexToText("\\mathrm{x} \\pi")).toBe("x π");
    expect(latexToText("\\begin{pmatrix} 3 \\\\ -1 \\end{pmatrix}")).toBe("[  3; -1 ]");
  });
});

describe("prm800k-nosympy does not call equal what the grader does not", () => {
  it("\\text\\frac12 is not 1/2 (pylatexenc: %s/%s12)", () => {
    expect(gradeAnswerWithoutSympy("\\text\\frac12", "\\frac{1}{2}")).toBe(false);
    expect(gradeAnswerWithoutSympy("\\textbf{\\frac{1}{2}}", "\\frac{1}{2}")).toBe(true);
  });
});
