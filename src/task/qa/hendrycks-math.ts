import { firstChar, pyIntParses, pyLen, pyReplace } from "./python-text.ts";

/**
 * MATH as Hendrycks et al. score it (hendrycks/math, modeling/: `last_boxed_only_string` in dataset/util.py,
 * `remove_boxed` in the eval scripts, `is_equiv` and `_strip_string` in math_equivalence.py), with Python's
 * semantics kept: code-point indexing, a normaliser error falls back to comparing the raw strings.
 * PRM800K's `math_normalize.py` shares `stripString`.
 */

/** `last_boxed_only_string`: from the last "\boxed" (else the last "\fbox") to the brace that closes its first group. */
export function lastBoxedOnlyString(s: string): string | undefined {
  let idx = s.lastIndexOf("\\boxed");
  if (idx < 0) idx = s.lastIndexOf("\\fbox");
  if (idx < 0) return undefined;
  let open = 0;
  for (let i = idx; i < s.length; i++) {
    if (s[i] === "{") open++;
    else if (s[i] === "}" && --open === 0) return s.slice(idx, i + 1);
  }
  return undefined;
}

/** `remove_boxed`: the inside of "\boxed{…}", or undefined (so "\fbox{…}" never survives). */
export function removeBoxed(s: string | undefined): string | undefined {
  const left = "\\boxed{";
  if (s === undefined || !s.startsWith(left) || !s.endsWith("}")) return undefined;
  return s.slice(left.length, -1);
}

/** Python's `s[1:]`-style slice by code points. */
const rest = (s: string, from: number) => Array.from(s).slice(from).join("");

function fixFracs(string: string): string {
  const substrs = string.split("\\frac");
  let out = substrs[0] as string;
  for (const sub of substrs.slice(1)) {
    out += "\\frac";
    if (firstChar(sub) === "{") {
      out += sub;
      continue;
    }
    if (pyLen(sub) < 2) return string;
    const [a, b] = Array.from(sub) as [string, string];
    const post = rest(sub, 2);
    out += b !== "{" ? `{${a}}{${b}}${post}` : `{${a}}${b}${post}`;
  }
  return out;
}

const PY_INT = /^(0|-?[1-9][0-9]*)$/;

/**
 * `_fix_a_slash_b`: "a/b" with a and b written as Python prints an int becomes \frac{a}{b}. Hendrycks' version
 * catches everything; lm-evaluation-harness's copies (`fix_a_slash_b` in its aime and hendrycks_math utils) catch
 * only the AssertionError, so the ValueError of `int("x")` reaches `is_equiv`, which compares the raw strings.
 */
function fixASlashB(string: string, catchAll: boolean): string {
  const parts = string.split("/");
  if (parts.length !== 2) return string;
  const [a, b] = parts as [string, string];
  if (!catchAll && !(pyIntParses(a) && pyIntParses(b))) throw new Error("ValueError");
  return PY_INT.test(a) && PY_INT.test(b) ? `\\frac{${a}}{${b}}` : string;
}

function removeRightUnits(string: string): string {
  if (!string.includes("\\text{ ")) return string;
  const splits = string.split("\\text{ ");
  if (splits.length !== 2) throw new Error("AssertionError");
  return splits[0] as string;
}

function fixSqrt(string: string): string {
  if (!string.includes("\\sqrt")) return string;
  const splits = string.split("\\sqrt");
  let out = splits[0] as string;
  for (const split of splits.slice(1)) {
    const a = firstChar(split);
    out += a !== "{" ? `\\sqrt{${a}}${rest(split, 1)}` : `\\sqrt${split}`;
  }
  return out;
}

/**
 * `_strip_string`; throws where the Python raises (IndexError, AssertionError). `lmEval`: lm-evaluation-harness's
 * `strip_string`, the same but for the ValueError `fix_a_slash_b` lets through.
 */
export function stripString(input: string, lmEval = false): string {
  let s = input;
  for (const [old, rep] of [
    ["\n", ""],
    ["\\!", ""],
    ["\\\\", "\\"],
    ["tfrac", "frac"],
    ["dfrac", "frac"],
    ["\\left", ""],
    ["\\right", ""],
    ["^{\\circ}", ""],
    ["^\\circ", ""],
    ["\\$", ""],
  ] as const)
    s = pyReplace(s, old, rep);
  s = removeRightUnits(s);
  // Both lines of the original remove "\%" ("\%" in a Python literal is a backslash and a percent sign).
  s = pyReplace(s, "\\%", "");
  s = pyReplace(pyReplace(s, " .", " 0."), "{.", "{0.");
  if (s === "") return s;
  if (s.startsWith(".")) s = `0${s}`;
  const eq = s.split("=");
  if (eq.length === 2 && pyLen(eq[0] as string) <= 2) s = eq[1] as string;
  s = fixSqrt(s);
  s = pyReplace(s, " ", "");
  s = fixFracs(s);
  if (s === "0.5") s = "\\frac{1}{2}";
  return fixASlashB(s, !lmEval);
}

/** `is_equiv(str1, str2)`: equal after `_strip_string`, or equal as given when normalising raises (`lmEval`: see stripString). */
export function isEquiv(a: string | undefined, b: string | undefined, lmEval = false): boolean {
  if (a === undefined && b === undefined) return true;
  if (a === undefined || b === undefined) return false;
  try {
    return stripString(a, lmEval) === stripString(b, lmEval);
  } catch {
    return a === b;
  }
}

/** The answer a response gives: `remove_boxed(last_boxed_only_string(response))`. */
export const boxedAnswer = (response: string): string | undefined => removeBoxed(lastBoxedOnlyString(response));

/** exact_match: the response's last \boxed{} answer is `is_equiv` to the gold answer. */
export function scoreHendrycksMath(response: string, gold: string): 0 | 1 {
  return isEquiv(boxedAnswer(response), gold) ? 1 : 0;
}
