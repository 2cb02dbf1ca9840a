import { stripString } from "./hendrycks-math.ts";
import { latexToText } from "./latex-text.ts";
import { firstChar, lastChar, pyFloat, pyIntString, pyIsIntValue, pyLen, pyReplace, pyStrip } from "./python-text.ts";

/**
 * PRM800K's grader (openai/prm800k, prm800k/grading/grader.py `grade_answer` and math_normalize.py) without its
 * sympy stage. Stages, in the grader's order:
 *  1. equal after `math_normalize.normalize_answer` (strip, unwrap \text{…}, Hendrycks' `_strip_string`) — exact;
 *  2. equal after `_normalize` (units, words, \text, braces, integer floats, LaTeX to text, case) — exact, except
 *     that pylatexenc's LaTeX-to-text is reproduced for the vocabulary of `latex-text.ts` only: where either side
 *     holds LaTeX outside it (a matrix environment, an unknown macro), pylatexenc's text is unknown, so the two
 *     count as equal only when the texts given to it are the same, and stage 3 is not tried;
 *  3. a tuple or interval compared element by element, with its guards: bracket characters must agree, two
 *     fractions must be the same string (no unreduced fractions), an integer needs an integer — exact;
 *  4. `sympy.simplify(gold - given) == 0` — not run: it counts as unequal.
 * So the metric never says correct where the grader says wrong; it says wrong where only sympy would say equal.
 */

/** Python `re.search("^\\\\text\{(?P<text>.+?)\}$", s)`: the text of an enclosing \text{…}, or undefined. */
function enclosingText(s: string): string | undefined {
  if (!s.startsWith("\\text{")) return undefined;
  const body = s.slice(6);
  // `$` also matches before a final "\n"; `.` never matches "\n".
  const inner = body.endsWith("}\n") ? body.slice(0, -2) : body.endsWith("}") ? body.slice(0, -1) : undefined;
  return inner && !inner.includes("\n") ? inner : undefined;
}

/** math_normalize.normalize_answer */
export function mathdNormalize(answer: string): string {
  let a = pyStrip(answer);
  try {
    const text = enclosingText(a);
    if (text !== undefined) a = pyStrip(text);
    return stripString(a);
  } catch {
    return a;
  }
}

const UNITS = ["degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour", "day", "week", "month", "year"]
  .concat(["foot", "feet", "inch", "yard"])
  .map((u) => new RegExp(`${u}(es)?(s)? *(\\^[0-9]+)?`, "g"));

function parseLatex(input: string): string {
  let e = pyReplace(pyReplace(input, "\\tfrac", "\\frac"), "\\dfrac", "\\frac");
  e = pyReplace(e, "\\frac", " \\frac");
  const text = latexToText(e);
  if (text === undefined) throw new Error("not converted");
  e = text;
  for (const [from, to] of [
    ["√", "sqrt"],
    ["π", "pi"],
    ["∞", "inf"],
    ["∪", "U"],
    ["·", "*"],
    ["×", "*"],
  ])
    e = pyReplace(e, from as string, to as string);
  return pyStrip(e);
}

/** `_strip_properly_formatted_commas`: "1,234" → "1234" until nothing changes (Python's `\d` is Unicode). */
function stripProperCommas(expr: string): string {
  const re = /(\p{Nd}),(\p{Nd}{3})($|\P{Nd})/gu;
  let e = expr;
  for (;;) {
    const next = e.replace(re, "$1$2$3");
    if (next === e) return next;
    e = next;
  }
}

function strIsInt(x: string): boolean {
  const f = pyFloat(stripProperCommas(x));
  return f !== undefined && pyIsIntValue(f);
}

/**
 * `_normalize`, with `exact` false where the LaTeX-to-text step met LaTeX outside latex-text.ts's vocabulary (the
 * result then keeps the LaTeX, which pylatexenc would have rendered) and the text that step was given.
 */
function normalizeTracked(input: string): { text: string; exact: boolean; latexInput: string } {
  let e = enclosingText(input) ?? input;
  for (const [from, to] of [
    ["\\%", "%"],
    ["\\$", "$"],
    ["$", ""],
    ["%", ""],
    [" or ", " , "],
    [" and ", " , "],
    ["million", "*10^6"],
    ["billion", "*10^9"],
    ["trillion", "*10^12"],
  ])
    e = pyReplace(e, from as string, to as string);
  for (const unit of UNITS) e = e.replace(unit, "");
  e = e.replace(/\^ *\\circ/g, "");
  if (e.length > 0 && e.startsWith("{") && e.endsWith("}")) e = Array.from(e).slice(1, -1).join("");
  e = e.replace(/,\\! */g, "");
  const f = pyFloat(e);
  if (f !== undefined && pyIsIntValue(f)) e = pyIntString(Math.round(f));
  const latexInput = e;
  let exact = true;
  if (e.includes("\\")) {
    try {
      e = parseLatex(e);
    } catch {
      // Outside the vocabulary: pylatexenc renders it (it rarely raises), this port cannot say how.
      exact = false;
    }
  }
  e = e.replace(/- */g, "-");
  e = e.replace(/([0-9]) +([0-9])/g, "$1+$2");
  e = pyReplace(pyReplace(pyReplace(e, " ", ""), "{", ""), "}", "");
  e = e.toLowerCase();
  if (strIsInt(e)) e = pyIntString(pyFloat(pyReplace(e, ",", "")) as number);
  return { text: e, exact, latexInput };
}

/** `_normalize` (see `normalizeTracked` for LaTeX outside latex-text.ts's vocabulary). */
export const prmNormalize = (input: string): string => normalizeTracked(input).text;

const TUPLE_CHARS = "()[]";

function splitTuple(expr: string): string[] {
  const e = stripProperCommas(expr);
  if (e.length === 0) return [];
  const chars = Array.from(e);
  const inner = chars.slice(1, -1).join("");
  if (
    chars.length > 2 &&
    TUPLE_CHARS.includes(chars[0] as string) &&
    TUPLE_CHARS.includes(chars[chars.length - 1] as string) &&
    ![...TUPLE_CHARS].some((c) => inner.includes(c))
  )
    return inner.split(",").map(pyStrip);
  return [e];
}

/** `_is_frac`: `^-?[0-9]+.?/0*[1-9][0-9]*.?$` (Python's `.` is any character but "\n"). */
const isFrac = (e: string) => /^-?[0-9]+[^\n]?\/0*[1-9][0-9]*[^\n]?\n?$/u.test(e);

/** `grade_answer(given, gold)` with stage 4 (sympy) counted as unequal. */
export function gradeAnswerWithoutSympy(given: string | undefined, gold: string): boolean {
  if (given === undefined) return false;
  if (mathdNormalize(gold) === mathdNormalize(given)) return true;
  const gt = normalizeTracked(gold);
  const at = normalizeTracked(given);
  // pylatexenc's text of one side is unknown: equal only if it was given the same text (the grader's stage 3 and
  // sympy then decide, neither of which can be reproduced on unknown text: unequal).
  if (!gt.exact || !at.exact) return gt.latexInput === at.latexInput;
  const g = gt.text;
  const a = at.text;
  if (g === a) return true;
  if (pyLen(a) === 0) return false;
  const gElems = splitTuple(g);
  const aElems = splitTuple(a);
  if (gElems.length > 1 && (firstChar(g) !== firstChar(a) || lastChar(g) !== lastChar(a))) return false;
  if (gElems.length !== aElems.length) return false;
  return gElems.every((ge, i) => {
    const ae = aElems[i] as string;
    if (isFrac(ge) && isFrac(ae)) return ge === ae;
    if (strIsInt(ge) !== strIsInt(ae)) return false;
    return false; // are_equal_under_sympy: not reproduced
  });
}
