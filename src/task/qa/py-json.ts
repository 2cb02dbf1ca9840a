/**
 * JSON as Python's `json.loads` reads it, keeping what JavaScript's JSON.parse loses and BFCL's checker looks at:
 * an integer (`5`, arbitrary size) is not a float (`5.0`, `5e0`), object keys keep their order, a repeated key
 * keeps its last value, and NaN, Infinity and -Infinity are accepted. Linear, with size and depth caps.
 */

export type PyValue =
  | { t: "str"; v: string }
  | { t: "int"; v: bigint }
  | { t: "float"; v: number }
  | { t: "bool"; v: boolean }
  | { t: "none" }
  | { t: "list"; v: PyValue[] }
  | { t: "dict"; v: Map<string, PyValue> };

const MAX_CHARS = 1_000_000;
const MAX_DEPTH = 64;

export class PyJsonError extends Error {}

export function parsePyJson(text: string): PyValue {
  if (text.length > MAX_CHARS) throw new PyJsonError(`longer than ${MAX_CHARS} characters`);
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i] as string)) i++;
  };
  const fail = (what: string): never => {
    throw new PyJsonError(`${what} at character ${i}`);
  };
  const value = (depth: number): PyValue => {
    if (depth > MAX_DEPTH) fail("nested too deeply");
    ws();
    const c = text[i];
    if (c === "{") return object(depth);
    if (c === "[") return array(depth);
    if (c === '"') return { t: "str", v: string() };
    for (const [word, v] of [
      ["true", { t: "bool", v: true }],
      ["false", { t: "bool", v: false }],
      ["null", { t: "none" }],
      ["NaN", { t: "float", v: Number.NaN }],
      ["Infinity", { t: "float", v: Number.POSITIVE_INFINITY }],
      ["-Infinity", { t: "float", v: Number.NEGATIVE_INFINITY }],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v as PyValue;
      }
    }
    return number();
  };
  const number = (): PyValue => {
    const m = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 400));
    if (!m) return fail("expected a value");
    i += m[0].length;
    return m[1] || m[2] ? { t: "float", v: Number(m[0]) } : { t: "int", v: BigInt(m[0]) };
  };
  const string = (): string => {
    i++;
    let out = "";
    for (;;) {
      const j = text.slice(i).search(/["\\\u0000-\u001f]/);
      if (j < 0) fail("unterminated string");
      out += text.slice(i, i + j);
      i += j;
      const c = text[i];
      if (c === '"') {
        i++;
        return out;
      }
      if (c !== "\\") fail("control character in string");
      const e = text[i + 1];
      const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
      if (e !== undefined && e in simple) {
        out += simple[e];
        i += 2;
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
        i += 6;
      } else fail("invalid escape");
    }
  };
  const array = (depth: number): PyValue => {
    i++;
    const v: PyValue[] = [];
    ws();
    if (text[i] === "]") {
      i++;
      return { t: "list", v };
    }
    for (;;) {
      v.push(value(depth + 1));
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === "]") {
        i++;
        return { t: "list", v };
      } else fail("expected , or ]");
    }
  };
  const object = (depth: number): PyValue => {
    i++;
    const v = new Map<string, PyValue>();
    ws();
    if (text[i] === "}") {
      i++;
      return { t: "dict", v };
    }
    for (;;) {
      ws();
      if (text[i] !== '"') fail("expected a key");
      const key = string();
      ws();
      if (text[i] !== ":") fail("expected :");
      i++;
      v.set(key, value(depth + 1));
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === "}") {
        i++;
        return { t: "dict", v };
      } else fail("expected , or }");
    }
  };
  const result = value(0);
  ws();
  if (i !== text.length) fail("extra data");
  return result;
}

/** Python's `==` (int, float and bool compare as numbers; lists and dicts element by element). */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  const num = (x: PyValue) => (x.t === "int" ? x.v : x.t === "float" ? x.v : x.t === "bool" ? (x.v ? 1n : 0n) : undefined);
  const na = num(a);
  const nb = num(b);
  if (na !== undefined && nb !== undefined) {
    if (typeof na === "bigint" && typeof nb === "bigint") return na === nb;
    const fa = typeof na === "bigint" ? na : na;
    // A float equals an int only when it is integral and the same value.
    if (typeof fa === "number" && typeof nb === "bigint") return Number.isInteger(fa) && BigInt(fa) === nb;
    if (typeof fa === "bigint" && typeof nb === "number") return Number.isInteger(nb) && fa === BigInt(nb);
    return fa === nb;
  }
  if (a.t !== b.t) return false;
  if (a.t === "str") return a.v === (b as typeof a).v;
  if (a.t === "none") return true;
  if (a.t === "list") {
    const bv = (b as typeof a).v;
    return a.v.length === bv.length && a.v.every((x, k) => pyEquals(x, bv[k] as PyValue));
  }
  if (a.t === "dict") {
    const bv = (b as typeof a).v;
    if (a.v.size !== bv.size) return false;
    for (const [k, x] of a.v) {
      const y = bv.get(k);
      if (y === undefined || !pyEquals(x, y)) return false;
    }
    return true;
  }
  return false;
}

/** `x in xs` */
export const pyIn = (x: PyValue, xs: readonly PyValue[]): boolean => xs.some((y) => pyEquals(x, y));

/** Python's `type(x).__name__` family as BFCL's checker compares it. */
export const pyType = (x: PyValue): string => x.t;

/** JSON text a Python `json.loads` reads back as the same value (floats keep a decimal point). */
export function toPyJson(x: PyValue): string {
  switch (x.t) {
    case "str":
      return JSON.stringify(x.v);
    case "int":
      return x.v.toString();
    case "float":
      if (!Number.isFinite(x.v)) return Number.isNaN(x.v) ? "NaN" : x.v > 0 ? "Infinity" : "-Infinity";
      return Number.isInteger(x.v) && Math.abs(x.v) < 1e16 ? x.v.toFixed(1) : String(x.v);
    case "bool":
      return x.v ? "true" : "false";
    case "none":
      return "null";
    case "list":
      return `[${x.v.map(toPyJson).join(", ")}]`;
    case "dict":
      return `{${[...x.v].map(([k, v]) => `${JSON.stringify(k)}: ${toPyJson(v)}`).join(", ")}}`;
  }
}
