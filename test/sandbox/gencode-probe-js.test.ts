import { describe, expect, it } from "vitest";
import { gate } from "../../src/sandbox/gate.ts";

// The JavaScript gate against what the README promises it refuses (`the string "constructor"`, prototype writes),
// probed from outside: routes that kept the promise's letter but not its sense.

const tool = (body: string) => `function run(ctx, args) {\n${body}\n}\n`;

describe("the JavaScript gate keeps its documented rules", () => {
  const refused: [string, string, string, RegExp][] = [
    [
      "the string constructor as a template literal",
      tool("  const k = `constructor`;\n  return (() => 1)[k]('return 1')();"),
      "no-constructor",
      /the string "constructor"/,
    ],
    [
      "the string constructor as a method's receiver",
      tool("  return (() => 1)['constructor'.trim()]('return 1')();"),
      "no-constructor",
      /the string "constructor"/,
    ],
    [
      "a prototype held in a name and written through it",
      tool("  const p = Array.prototype;\n  p.push = () => 0;\n  return 1;"),
      "no-proto",
      /prototype as a value/,
    ],
    [
      "a prototype destructured and written through its name",
      tool("  const { prototype: p } = Array;\n  p.map = () => 0;\n  return 1;"),
      "no-proto",
      /destructuring prototype/,
    ],
    [
      "a prototype passed to a function that writes it",
      tool("  const w = (o) => { o.join = () => 'x'; };\n  w(Array.prototype);\n  return [1, 2].join();"),
      "no-proto",
      /prototype as a value/,
    ],
  ];
  it.each(refused)("refuses %s, with the rule and line:column", (_name, code, rule, detail) => {
    const refusals = gate(code, "tool");
    const hit = refusals.find((r) => r.rule === rule && detail.test(r.message));
    expect(hit, JSON.stringify(refusals)).toBeDefined();
    expect(hit?.line).toBeGreaterThan(1);
    expect(hit?.column).toBeGreaterThan(0);
  });

  it("still accepts prototype method chains and constructor as an object's own key", () => {
    const code = tool(
      "  const xs = Array.prototype.slice.call([3, 1, 2], 1);\n  const o = { constructor: 1 };\n  class A { constructor() { this.x = 1; } }\n  return { xs, o: o.k, a: new A().x };",
    );
    expect(gate(code, "tool")).toEqual([]);
  });
});
