import { describe, expect, it } from "vitest";
import { gradeAnswerWithoutSympy } from "../../src/task/qa/prm800k.ts";
import { scoreAnswer } from "../../src/task/qa/score-answer.ts";

/**
 * PRM800K's grader (openai/prm800k grading/grader.py, pylatexenc 2.10, `are_equal_under_sympy` off) on answers
 * whose LaTeX lies outside latex-text.ts's vocabulary: pylatexenc renders them, hone cannot, so hone must never
 * call equal what the grader calls unequal. Expected values are the grader's own, run on these strings.
 */
const MATRIX = String.raw`\begin{pmatrix} 1 \\ 2 \end{pmatrix}`;

describe("prm800k-nosympy on matrices, which pylatexenc renders as [ a; b ]", () => {
  it("grades them as the grader does without sympy", () => {
    // grader: both sides normalise to "[1;2]" (bmatrix and pmatrix render alike; \text{…} is unwrapped)
    expect(gradeAnswerWithoutSympy(String.raw`\begin{bmatrix} 1 \\ 2 \end{bmatrix}`, MATRIX)).toBe(true);
    expect(gradeAnswerWithoutSympy(String.raw`\text{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}`, MATRIX)).toBe(true);
    const half = String.raw`\begin{pmatrix} 1/2 \\ 2 \end{pmatrix}`;
    expect(gradeAnswerWithoutSympy(String.raw`\begin{pmatrix} \frac{1}{2} \\ 2 \end{pmatrix}`, half)).toBe(true);
  });
});

describe("prm800k-nosympy on LaTeX outside the reproduced vocabulary", () => {
  it("does not call equal two matrices pylatexenc renders differently", () => {
    // grader: "\beginpmatrix" is an unknown macro (rendered as nothing) → "1\n2" ≠ "[1;2]"
    expect(gradeAnswerWithoutSympy(String.raw`\beginpmatrix 1 \\ 2 \endpmatrix`, MATRIX)).toBe(false);
    // grader: "\BEGIN" is an unknown macro, "{PMATRIX}" its text → "pmatrix1\n2pmatrix" ≠ "[1;2]"
    expect(gradeAnswerWithoutSympy(String.raw`\BEGIN{PMATRIX} 1 \\ 2 \END{PMATRIX}`, MATRIX)).toBe(false);
    expect(scoreAnswer("math500", String.raw`\boxed{\beginpmatrix 1 \\ 2 \endpmatrix}`, MATRIX)["prm800k-nosympy"]).toBe(0);
  });

  it("does not call equal styled letters that differ only in case (pylatexenc: 𝐕 ≠ 𝐯, ℝ ≠ 𝕣)", () => {
    expect(gradeAnswerWithoutSympy("\\mathbf{V}", "\\mathbf{v}")).toBe(false);
    expect(gradeAnswerWithoutSympy("\\mathbb{R}", "\\mathbb{r}")).toBe(false);
    expect(gradeAnswerWithoutSympy("\\mathbf{v}", "\\mathbf{v}")).toBe(true);
  });

  it("still grades the matrices the grader's exact stages accept, and rejects wrong ones", () => {
    expect(gradeAnswerWithoutSympy(MATRIX, MATRIX)).toBe(true);
    expect(gradeAnswerWithoutSympy(String.raw`\begin{pmatrix}1\\2\end{pmatrix}`, MATRIX)).toBe(true);
    expect(gradeAnswerWithoutSympy(String.raw`\begin{pmatrix} 2 \\ 1 \end{pmatrix}`, MATRIX)).toBe(false);
    expect(gradeAnswerWithoutSympy(String.raw`\begin{pmatrix} 1 \\ 2 \end{pmatrix}.`, MATRIX)).toBe(false);
    expect(gradeAnswerWithoutSympy(String.raw`\begin{pmatrix} 1 & 2 \end{pmatrix}`, MATRIX)).toBe(false);
    expect(scoreAnswer("math500", String.raw`\boxed{\begin{pmatrix}1 \\ 2\end{pmatrix}}`, MATRIX)).toEqual({
      exact_match: 1,
      "prm800k-nosympy": 1,
    });
  });
});
