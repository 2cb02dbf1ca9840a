/**
 * Python's number rounding and formatting, so a ported rule shows the same numbers its upstream code shows.
 * Python rounds the exact binary value of a float and breaks exact ties to even (`round(0.125, 2) == 0.12`,
 * `round(2.5) == 2`); JavaScript's `toFixed` breaks ties upward and `Math.round` rounds half up.
 */

/** The exact decimal digits of |x| rounded to `digits` decimals, ties to even (exact for |x| ≥ 2^-48). */
function roundedDigits(x: number, digits: number): { negative: boolean; whole: bigint } {
  if (!Number.isInteger(digits) || digits < 0 || digits > 50) throw new RangeError(`digits must be 0..50, got ${digits}`);
  const [int = "0", frac = ""] = Math.abs(x).toFixed(100).split(".");
  const rest = frac.slice(digits);
  let whole = BigInt(int + frac.slice(0, digits));
  const first = rest[0] ?? "0";
  const tie = first === "5" && /^0*$/.test(rest.slice(1));
  if (first > "5" || (first === "5" && !tie) || (tie && whole % 2n === 1n)) whole += 1n;
  return { negative: x < 0 || Object.is(x, -0), whole };
}

/** Python's `round(x, digits)`. */
export function pyRound(x: number, digits = 0): number {
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return x;
  const { negative, whole } = roundedDigits(x, digits);
  const v = Number(`${whole}e-${digits}`);
  return negative ? -v : v;
}

/** Python's `f"{x:.{digits}f}"`. */
export function pyFixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (Math.abs(x) >= 1e21) return x.toFixed(digits);
  const { negative, whole } = roundedDigits(x, digits);
  const s = whole.toString().padStart(digits + 1, "0");
  const body = digits === 0 ? s : `${s.slice(0, -digits)}.${s.slice(-digits)}`;
  return negative ? `-${body}` : body;
}

/** Python's `f"{x:.{digits}%}"` (the value times 100, fixed, then a percent sign). */
export function pyPercent(x: number, digits: number): string {
  return `${pyFixed(x * 100, digits)}%`;
}

/** Python's `f"{x:+.{digits}%}"`: always signed. */
export function pySignedPercent(x: number, digits: number): string {
  const s = pyPercent(x, digits);
  return s.startsWith("-") ? s : `+${s}`;
}

/** Python's `repr(float)`: the shortest round-trip digits, `1.0` for integral values, exponent below 1e-4 and from 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa = "0", expText = "0"] = x.toExponential().split("e");
  const exp = Number(expText);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  let body: string;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) body = `0.${"0".repeat(-exp - 1)}${digits}`;
    else if (digits.length <= exp + 1) body = `${digits}${"0".repeat(exp + 1 - digits.length)}.0`;
    else body = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  } else {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    body = `${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return negative ? `-${body}` : body;
}
