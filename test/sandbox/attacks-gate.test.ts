import { afterEach, describe, expect, it } from "vitest";
import { gate } from "../../src/sandbox/gate.ts";
import { ISOLATE_GLOBALS } from "../../src/sandbox/gate-rules.ts";
import { SandboxModule } from "../../src/sandbox/isolate.ts";
import { limits, modules } from "./attack-helpers.ts";

// The static gate against scope tricks (issue 17) and the routes to code from strings (issue 12): each case names
// the rule and the exact line:column refused. Names are resolved by a real scope analysis, so a binding hides a
// global only inside its own scope; legitimate shadowing inside that scope passes.

afterEach(() => {
  for (const m of modules.splice(0)) m.dispose();
});

const found = (source: string) => gate(source, "tool").map((r) => `${r.rule}@${r.line}:${r.column}`);
const RUN = "\nfunction run(ctx) { return 1; }";

describe("scope tricks: a binding hides a global only inside its own scope", () => {
  it.each([
    [
      "unused parameters (the issue's case)",
      "function unused(globalThis, Date, process) {}\nfunction run(ctx) { return [globalThis, Date, process]; }",
      ["unknown-global@2:29", "unknown-global@2:41", "unknown-global@2:47"],
    ],
    ["a catch clause", "function run(ctx) { try {} catch (process) {} return process.env; }", ["unknown-global@1:54"]],
    [
      "a destructured catch clause",
      "function run(ctx) { try {} catch ({ message: process }) {} return process; }",
      ["unknown-global@1:67"],
    ],
    [
      "object destructuring in another function",
      "function f() { const { a: Date } = {}; return Date; }\nfunction run(ctx) { return Date.now(); }",
      ["unknown-global@2:28"],
    ],
    [
      "array destructuring with a rest element",
      "function f() { const [a, ...globalThis] = [1]; }\nfunction run(ctx) { return globalThis; }",
      ["unknown-global@2:28"],
    ],
    [
      "a defaulted destructured parameter",
      "function f({ process } = {}) {}\nfunction run(ctx) { return process; }",
      ["unknown-global@2:28"],
    ],
    ["a rest parameter", "function f(...process) {}\nfunction run(ctx) { return process; }", ["unknown-global@2:28"]],
    [
      "an arrow's parameter",
      "const f = (globalThis) => globalThis;\nfunction run(ctx) { return globalThis; }",
      ["unknown-global@2:28"],
    ],
    [
      "a var hoisted in a nested function",
      "function run(ctx) { function inner() { var Date = 1; } return Date.now(); }",
      ["unknown-global@1:63"],
    ],
    [
      "a var hoisted out of a block, but only to its own function",
      "function f() { { var process = 1; } return process; }\nfunction run(ctx) { return process; }",
      ["unknown-global@2:28"],
    ],
    ["a let in a block", "function run(ctx) { { let Date = 1; } return Date.now(); }", ["unknown-global@1:46"]],
    ["a for-of let", "function run(ctx) { for (let process of []) {} return process; }", ["unknown-global@1:55"]],
    [
      "a named function expression",
      "const f = function process() { return process; };\nfunction run(ctx) { return process; }",
      ["unknown-global@2:28"],
    ],
    ["a named class expression", "const C = class process {};\nfunction run(ctx) { return process; }", ["unknown-global@2:28"]],
    [
      "a class method's parameter",
      "class A { m(globalThis) { return globalThis; } }\nfunction run(ctx) { return globalThis; }",
      ["unknown-global@2:28"],
    ],
    [
      "a default parameter that sees the body's var only by name",
      `function f(a = () => Date) { var Date; return a; }${RUN}`,
      ["unknown-global@1:22"],
    ],
    ["a label", "function run(ctx) { process: for (;;) break process; return process; }", ["unknown-global@1:61"]],
    [
      "an object key and a property name",
      "const o = { process: 1 }; o.process;\nfunction run(ctx) { return process; }",
      ["unknown-global@2:28"],
    ],
    [
      "a function declared in a block (outside the block)",
      "{ function Date() {} }\nfunction run(ctx) { return Date.now(); }",
      ["unknown-global@2:28"],
    ],
    ["a top-level var named after a global (it starts out holding the global)", `var globalThis;${RUN}`, ["no-global-var@1:5"]],
    ["a top-level var Date assigned later", "function run(ctx) { return Date.now(); }\nvar Date = 0;", ["no-global-var@2:5"]],
  ])("%s", (_name, source, expected) => {
    expect(found(source)).toEqual(expected);
  });

  it.each([
    ["a parameter used in its own function", `function f(Date) { return Date.now(); }${RUN}`],
    ["a top-level let shadowing a global", "let Date = { now: () => 1 };\nfunction run(ctx) { return Date.now(); }"],
    ["a top-level class", "class Date {}\nfunction run(ctx) { return new Date(); }"],
    ["a catch parameter inside its clause", "function run(ctx) { try { null.x; } catch (process) { return String(process); } }"],
    ["a var used in its own function", "function run(ctx) { { var process = 1; } return process; }"],
  ])("passes legitimate shadowing: %s", (_name, source) => {
    expect(found(source)).toEqual([]);
  });

  it("the list of the isolate's globals is the real one (after hone's bootstrap)", async () => {
    const m = new SandboxModule("function run() { return Object.getOwnPropertyNames(globalThis).sort(); }", "g.js", limits);
    modules.push(m);
    const r = await m.call("run", [{}]);
    // The module's own top-level function is a global too.
    expect(r).toEqual({ ok: true, value: [...ISOLATE_GLOBALS, "run"].sort() });
  });
});

describe("computed lookups: the documented rule", () => {
  it.each([
    ["a literal key on ctx", "function run(ctx) { return ctx['evaluate'](); }", ["no-computed-on-root@1:28"]],
    ["a template key on ctx", "function run(ctx) { return ctx[`evaluate`](); }", ["no-computed-on-root@1:28"]],
    ["an optional computed lookup on ctx", "function run(ctx) { return ctx?.['probe'](); }", ["no-computed-on-root@1:28"]],
    ["run's first parameter under another name", "function run(c) { return c['evaluate'](); }", ["no-computed-on-root@1:26"]],
    ["an arrow run", "const run = async (c, a) => c[a.k]();", ["no-computed-on-root@1:29"]],
    ["a helper's binding named ctx", `function helper(ctx, k) { return ctx[k]; }${RUN}`, ["no-computed-on-root@1:34"]],
    [
      "computed destructuring of ctx",
      "function run(ctx) { const { ['evaluate']: e } = ctx; return e(); }",
      ["no-computed-on-root@1:29"],
    ],
    [
      "computed assignment destructuring of ctx",
      "function run(ctx, a) { let e; ({ [a.k]: e } = ctx); return e; }",
      ["no-computed-on-root@1:34"],
    ],
    ["arguments", "function run(ctx) { return arguments[0]; }", ["no-computed-on-root@1:28"]],
    ["a global namespace with a literal key", "function run(ctx) { return Math['random'](); }", ["no-computed-on-root@1:28"]],
  ])("refuses %s", (_name, source, expected) => {
    expect(found(source)).toEqual(expected);
  });

  it.each([
    [
      "member access and plain destructuring of ctx",
      "async function run(ctx) { const { evaluate } = ctx; return [ctx.program, await evaluate()]; }",
    ],
    ["computed lookups on data", "function run(ctx, args) { const a = [1, 2]; return [a[args.i], args[args.k]]; }"],
    ["a shadowed namespace", "function run(ctx) { const Math = { x: 1 }; return Math['x']; }"],
  ])("passes %s", (_name, source) => {
    expect(found(source)).toEqual([]);
  });
});

describe("routes to the Function constructor, the global object and the real clock", () => {
  it.each([
    [
      "the issue's descriptor route",
      "function run() { return Object.getOwnPropertyDescriptor(Object.getPrototypeOf(function () {}), 'constructor').value; }",
      ["no-reflection@1:25", "no-reflection@1:57", "no-constructor@1:96"],
    ],
    [
      "all descriptors at once",
      "function run() { return Object.getOwnPropertyDescriptors(function () {}); }",
      ["no-reflection@1:25"],
    ],
    ["an alias of Object", "const O = Object;\nfunction run() { return O.getPrototypeOf(O); }", ["no-reflection@2:25"]],
    ["destructuring the reflection functions", `const { getOwnPropertyDescriptor: d } = Object;${RUN}`, ["no-reflection@1:9"]],
    ["destructuring constructor", "function run() { const { constructor: C } = () => 1; return C; }", ["no-constructor@1:26"]],
    ["Reflect", "function run() { return Reflect.getPrototypeOf({}); }", ["no-reflection@1:25", "no-reflection@1:25"]],
    ["the string constructor as a key", "function run(ctx, a) { return a['constructor']; }", ["no-constructor@1:31"]],
    ["the string constructor in a variable", "function run() { const k = 'constructor'; return k; }", ["no-constructor@1:28"]],
    [
      "this in a plain function (the global object when called plainly)",
      "function run() { return this.Date; }",
      ["no-global-this@1:25"],
    ],
    ["this at the top level", `const g = this;${RUN}`, ["no-global-this@1:11"]],
    ["Date", "function run() { return Date.now(); }", ["unknown-global@1:25"]],
    ["Intl", "function run() { return new Intl.DateTimeFormat().format(); }", ["unknown-global@1:29"]],
  ])("refuses %s", (_name, source, expected) => {
    expect(found(source)).toEqual(expected);
  });

  it("passes new.target (it is not import.meta), and still refuses import.meta beside it", () => {
    expect(found(`function F() { if (!new.target) return new F(); }${RUN}`)).toEqual([]);
    expect(found("function run(ctx) { return [new.target, import.meta]; }")).toEqual(["no-import@1:41"]);
  });

  it("passes this in methods, class fields and static blocks, and a class constructor", () => {
    expect(
      found(
        "const o = { n: 1, m() { return this.n; }, get g() { return this.n; } };\nclass A { x = this; static { this.y = 1; } constructor() { this.z = 2; } m() { return () => this.z; } }" +
          RUN,
      ),
    ).toEqual([]);
  });
});
