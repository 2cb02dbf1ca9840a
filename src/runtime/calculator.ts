/** Arithmetic for the QA calculator tool: numbers, + - * / % ^, parentheses, unary minus. A parser, never eval. */
export function calculate(expression: string): number {
  const src = expression.replace(/,/g, "").replace(/\s+/g, "");
  if (src.length === 0 || src.length > 500) throw new Error("give an arithmetic expression of at most 500 characters");
  let i = 0;
  const peek = () => src[i];
  const expect = (c: string) => {
    if (src[i] !== c) throw new Error(`expected "${c}" at position ${i + 1}`);
    i++;
  };
  const number = (): number => {
    const m = /^\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|^\.\d+/.exec(src.slice(i));
    if (!m) throw new Error(`expected a number at position ${i + 1}`);
    i += m[0].length;
    return Number(m[0]);
  };
  const primary = (): number => {
    if (peek() === "(") {
      i++;
      const v = sum();
      expect(")");
      return v;
    }
    if (peek() === "-") {
      i++;
      return -primary();
    }
    if (peek() === "+") {
      i++;
      return primary();
    }
    return number();
  };
  const power = (): number => {
    const base = primary();
    if (peek() === "^") {
      i++;
      return base ** power();
    }
    return base;
  };
  const product = (): number => {
    let v = power();
    while (peek() === "*" || peek() === "/" || peek() === "%") {
      const op = src[i++];
      const r = power();
      v = op === "*" ? v * r : op === "/" ? v / r : v % r;
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (peek() === "+" || peek() === "-") {
      const op = src[i++];
      const r = product();
      v = op === "+" ? v + r : v - r;
    }
    return v;
  };
  const value = sum();
  if (i !== src.length) throw new Error(`unexpected "${src[i]}" at position ${i + 1}`);
  if (!Number.isFinite(value)) throw new Error("the result is not a finite number");
  return value;
}
