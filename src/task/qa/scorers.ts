/**
 * Official scoring rules of the QA benchmarks, written from their published definitions:
 * GSM8K (openai/grade-school-math dataset.py; lm-eval-harness strict-match and flexible-extract), MATH-500
 * (PRM800K grader: last \boxed{}, Hendrycks normalisation, numeric equality), HotpotQA (hotpot_evaluate_v1.py).
 */

// ---- GSM8K -------------------------------------------------------------------------------------------------

export const gsm8kGold = (answerField: string): string => {
  const m = /#### (-?[0-9.,]+)/.exec(answerField);
  if (!m) throw new Error("GSM8K answer has no '#### ' line");
  return (m[1] as string).replace(/,/g, "");
};

const cleanNumber = (s: string) => s.replace(/[$,]/g, "").replace(/\.$/, "").trim();

/** strict-match: the number after "#### " in the response. */
export function gsm8kStrict(response: string): string | undefined {
  const m = /#### (-?[0-9.,$]+)/.exec(response);
  return m ? cleanNumber(m[1] as string) : undefined;
}

/** flexible-extract: a \boxed{} answer if present, else the last number in the response. */
export function gsm8kFlexible(response: string): string | undefined {
  const boxed = lastBoxed(response);
  if (boxed !== undefined) return cleanNumber(boxed);
  const nums = response.match(/-?[$]?[0-9][0-9,]*(?:\.[0-9]+)?/g);
  return nums?.length ? cleanNumber(nums[nums.length - 1] as string) : undefined;
}

export function sameNumber(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const x = Number(a);
  const y = Number(b);
  return Number.isFinite(x) && Number.isFinite(y) ? Math.abs(x - y) < 1e-9 * Math.max(1, Math.abs(y)) : a === b;
}

export function scoreGsm8k(response: string, gold: string): { correct: boolean; strict: boolean; extracted?: string } {
  const strict = gsm8kStrict(response);
  const flexible = gsm8kFlexible(response);
  return { correct: sameNumber(flexible, gold), strict: sameNumber(strict, gold), extracted: flexible };
}

// ---- MATH-500 ------------------------------------------------------------------------------------------------

/** The content of the last \boxed{...} (balanced braces), or undefined. */
export function lastBoxed(text: string): string | undefined {
  const start = Math.max(text.lastIndexOf("\\boxed{"), text.lastIndexOf("\\fbox{"));
  if (start < 0) return undefined;
  let i = text.indexOf("{", start) + 1;
  let depth = 1;
  const from = i;
  for (; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return text.slice(from, i);
  }
  return undefined;
}

function fixFracs(s: string): string {
  // \frac12 -> \frac{1}{2}, \frac1{2} -> \frac{1}{2}
  return s
    .replace(/\\frac(?!\{)(\d)(\d|\{[^}]*\})/g, (_m, a, b) => `\\frac{${a}}{${String(b).replace(/^\{|\}$/g, "")}}`)
    .replace(/\\frac\{([^}]*)\}(\d)/g, "\\frac{$1}{$2}");
}

function fixSqrt(s: string): string {
  return s.replace(/\\sqrt(\w)/g, "\\sqrt{$1}");
}

/** The Hendrycks MATH normaliser (strip_string), ported. */
export function normalizeMath(answer: string): string {
  let s = answer.replace(/\n/g, "").replace(/\\!/g, "").replace(/\\\\/g, "\\");
  s = s.replace(/tfrac/g, "frac").replace(/dfrac/g, "frac");
  s = s.replace(/\\left/g, "").replace(/\\right/g, "");
  s = s.replace(/\^\{\\circ\}/g, "").replace(/\^\\circ/g, "");
  s = s.replace(/\\\$/g, "").replace(/\$/g, "");
  s = s.replace(/\\text\{\s*[a-zA-Z ]*\}$/g, "").replace(/\\mbox\{\s*[a-zA-Z ]*\}$/g, "");
  s = s.replace(/\\%/g, "").replace(/%/g, "");
  s = s.replace(/ \./g, " 0.").replace(/\{\./g, "{0.");
  if (s.startsWith(".")) s = `0${s}`;
  const eq = s.split("=");
  if (eq.length === 2 && (eq[0] as string).length <= 2) s = eq[1] as string;
  s = fixSqrt(s);
  s = s.replace(/ /g, "");
  s = fixFracs(s);
  if (s === "0.5") s = "\\frac{1}{2}";
  const simple = /^(-?\d+)\/(\d+)$/.exec(s);
  if (simple) s = `\\frac{${simple[1]}}{${simple[2]}}`;
  return s;
}

function numericValue(s: string): number | undefined {
  const frac = /^(-?)\\frac\{(-?\d+(?:\.\d+)?)\}\{(\d+(?:\.\d+)?)\}$/.exec(s);
  if (frac) return (frac[1] ? -1 : 1) * (Number(frac[2]) / Number(frac[3]));
  const n = Number(s.replace(/,/g, ""));
  return s.trim() !== "" && Number.isFinite(n) ? n : undefined;
}

/**
 * Correct when the normalised strings match, or both are plain numbers (or simple fractions) of equal value. An
 * integer gold needs an integer answer; an unreduced fraction must match exactly (PRM800K's guards). Symbolic
 * equivalence beyond that (sympy in the original) is not attempted.
 */
export function scoreMath(response: string, gold: string): { correct: boolean; extracted?: string } {
  const boxed = lastBoxed(response);
  if (boxed === undefined) return { correct: false };
  const a = normalizeMath(boxed);
  const g = normalizeMath(gold);
  if (a === g) return { correct: true, extracted: boxed };
  const x = numericValue(a);
  const y = numericValue(g);
  if (x === undefined || y === undefined) return { correct: false, extracted: boxed };
  if (/^-?\d+$/.test(g) && !/^-?\d+(\.0+)?$/.test(a)) return { correct: false, extracted: boxed };
  if (g.includes("\\frac") && a.includes("\\frac")) return { correct: a === g, extracted: boxed };
  return { correct: Math.abs(x - y) < 1e-9 * Math.max(1, Math.abs(y)), extracted: boxed };
}

// ---- HotpotQA ------------------------------------------------------------------------------------------------

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

export function normalizeAnswer(s: string): string {
  return s
    .toLowerCase()
    .replace(PUNCTUATION, "")
    .replace(/\b(a|an|the)\b/g, " ")
    .split(/\s+/)
    .filter(Boolean)
    .join(" ");
}

export function hotpotExactMatch(prediction: string, gold: string): boolean {
  return normalizeAnswer(prediction) === normalizeAnswer(gold);
}

/** Token F1; 0 when either side is yes/no/noanswer and they differ (the official rule). */
export function hotpotF1(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  const special = ["yes", "no", "noanswer"];
  if ((special.includes(p) || special.includes(g)) && p !== g) return 0;
  const pt = p.split(" ").filter(Boolean);
  const gt = g.split(" ").filter(Boolean);
  const counts = new Map<string, number>();
  for (const t of gt) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of pt) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / pt.length;
  const recall = common / gt.length;
  return (2 * precision * recall) / (precision + recall);
}
