/**
 * Python 3 string semantics the official scorers rely on, written out for JavaScript. The official scripts index by
 * code point, strip and split on `str.isspace` characters (not JavaScript's `\s`: Python adds U+001C–U+001F and
 * U+0085, JavaScript adds U+FEFF), treat every Unicode letter, number and `_` as a word character for `\w` and `\b`
 * (JavaScript's `\b` is ASCII-only), and let `.` match everything but "\n" (JavaScript's also stops at "\r",
 * U+2028 and U+2029). Every function here is linear in its input.
 */

/** The characters of Python's `str.isspace()` (Unicode 14: Zs, and bidirectional classes WS, B, S). */
export const PY_SPACE_CLASS = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const SPACE_RUN = new RegExp(`[${PY_SPACE_CLASS}]+`, "u");
const LEADING_SPACE = new RegExp(`^[${PY_SPACE_CLASS}]+`, "u");
const TRAILING_SPACE = new RegExp(`[${PY_SPACE_CLASS}]+$`, "u");

/** Python `re`'s `\w` for str patterns: `str.isalnum()` or "_" (letters L*, numbers N*). */
export const PY_WORD_CLASS = "\\p{L}\\p{N}_";

/** `s.strip()` */
export function pyStrip(s: string): string {
  return s.replace(LEADING_SPACE, "").replace(TRAILING_SPACE, "");
}

/** `s.split()` (no separator): runs of whitespace, no empty strings. */
export function pySplit(s: string): string[] {
  return s.split(SPACE_RUN).filter((t) => t !== "");
}

/** `s.replace(old, new)`: literal, every occurrence, no `$` patterns. */
export function pyReplace(s: string, old: string, replacement: string): string {
  return s.split(old).join(replacement);
}

/** The code points of `s` (Python's indexing unit). */
export const codePoints = (s: string): string[] => Array.from(s);

/** `len(s)` */
export const pyLen = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** `s[0]` and `s[-1]` as code points; `s[0]` of "" raises IndexError in Python, here it throws. */
export function firstChar(s: string): string {
  const c = s.codePointAt(0);
  if (c === undefined) throw new RangeError("string index out of range");
  return String.fromCodePoint(c);
}
export function lastChar(s: string): string {
  if (s === "") throw new RangeError("string index out of range");
  const last = s.charCodeAt(s.length - 1);
  const isLow = last >= 0xdc00 && last <= 0xdfff;
  const start = isLow && s.length >= 2 && (s.charCodeAt(s.length - 2) & 0xfc00) === 0xd800 ? s.length - 2 : s.length - 1;
  return s.slice(start);
}

const DECIMAL = /\p{Nd}/u;

/** The value of a Unicode decimal digit (Nd), whose code points come in runs of ten starting at zero. */
function decimalValue(cp: number): number {
  let start = cp;
  while (start > 0 && DECIMAL.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/** Python's `str` → ASCII step before numeric parsing: Unicode decimal digits to 0-9, Unicode spaces to " ". */
function toAsciiNumeral(s: string): string {
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp > 0x7f && DECIMAL.test(ch)) out += String(decimalValue(cp));
    else if (cp > 0x7f && SPACE_RUN.test(ch)) out += " ";
    else out += ch;
  }
  return out;
}

const FLOAT_BODY = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const FLOAT_SPECIAL = /^[+-]?(?:inf|infinity|nan)$/i;

/** `float(s)`, or undefined where Python raises ValueError. */
export function pyFloat(s: string): number | undefined {
  const t = toAsciiNumeral(s).replace(/^[ \t\n\x0b\x0c\r]+|[ \t\n\x0b\x0c\r]+$/g, "");
  if (FLOAT_SPECIAL.test(t)) {
    if (/nan/i.test(t)) return Number.NaN;
    return t.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (!FLOAT_BODY.test(t)) return undefined;
  return Number(t.replace(/_/g, ""));
}

const INT_BODY = /^[+-]?\d(?:_?\d)*$/;

/** Whether `int(s)` (base 10) parses `s` rather than raising ValueError. */
export function pyIntParses(s: string): boolean {
  return INT_BODY.test(toAsciiNumeral(s).replace(/^[ \t\n\x0b\x0c\r]+|[ \t\n\x0b\x0c\r]+$/g, ""));
}

/** `abs(x - int(round(x))) <= 1e-7`, with Python's errors (inf, nan) as false. */
export function pyIsIntValue(x: number): boolean {
  if (!Number.isFinite(x)) return false;
  return Math.abs(x - pyRound(x)) <= 1e-7;
}

/** `round(x)` for a finite float: to the nearest integer, ties to even. */
export function pyRound(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** `str(int(x))` for a finite float holding an integer value (exact, however large). */
export function pyIntString(x: number): string {
  return BigInt(Math.trunc(x)).toString();
}
