import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SandboxModule } from "../../src/sandbox/isolate.ts";
import { callHook } from "../../src/sandbox/middleware-host.ts";
import { attack, countedEnv, limits, modules, PROGRAM } from "./attack-helpers.ts";

// The generated-tool attacks of issue 12 (each reproduced from the CLI before the fix) and more of the same kinds,
// run in the isolate with the static gate bypassed: each asserts the exact outcome, that the budget holds, and
// that the host's event loop kept ticking. `{ ok: true }` in the second call's arguments is the benign path.

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => process.on("unhandledRejection", onUnhandled));
afterAll(() => process.off("unhandledRejection", onUnhandled));
afterEach(() => {
  for (const m of modules.splice(0)) m.dispose();
  expect(unhandled).toEqual([]);
});

const benign = "if (args && args.ok) return 'fine';";
const bomb = '"<<<<<<< SEARCH\\n=======\\n".repeat(4000)';

describe("issue 12: generated tools that hung or crashed the host", () => {
  it("a SEARCH/REPLACE bomb through ctx.stageEdit is refused by line, the program unchanged", async () => {
    const a = await attack(`function run(ctx, args) { ${benign} return ctx.stageEdit({ edits: ${bomb} }); }`, {
      second: { ok: true },
    });
    expect(a.result).toEqual({
      ok: true,
      value: {
        ok: false,
        error: "SEARCH block 1 (line 1) has no >>>>>>> REPLACE line before the next <<<<<<< SEARCH (line 3)",
      },
    });
    expect(a.env.program).toBe(PROGRAM);
    expect(a.after).toEqual({ ok: true, value: "fine" });
  });

  it("a 1 MB edit is refused inside the isolate before it reaches the host", async () => {
    const a = await attack(`function run(ctx) { return ctx.stageEdit({ edits: "<<<<<<< SEARCH\\n=======\\n".repeat(44000) }); }`);
    expect(a.result).toMatchObject({
      ok: true,
      value: { ok: false, error: expect.stringMatching(/^the edit is more than \d+ characters as JSON/) },
    });
    expect(a.env.program).toBe(PROGRAM);
  });

  it("an Error whose message getter loops forever is described without running the getter", async () => {
    const a = await attack(
      `function run(ctx, args) { ${benign} const e = new Error("x"); Object.defineProperty(e, "message", { get() { for (;;) {} } }); throw e; }`,
      { second: { ok: true } },
    );
    expect(a.result).toEqual({
      ok: false,
      kind: "throw",
      error: "threw Error whose message is a getter, which hone does not run",
    });
    expect(a.after).toEqual({ ok: true, value: "fine" });
  });

  it("the same Error thrown while the module loads is a clean failure", async () => {
    const a = await attack(
      'const e = new Error("x"); Object.defineProperty(e, "message", { get() { for (;;) {} } }); throw e;\nfunction run() { return 1; }',
    );
    expect(a.result).toEqual({
      ok: false,
      kind: "throw",
      error: "threw Error whose message is a getter, which hone does not run",
    });
  });

  it("a top-level __hone_invoke (and __hone_lookup, __hone_host_*) cannot replace hone's entry", async () => {
    const a = await attack(
      "function __hone_invoke() { return 'pwned'; }\nvar __hone_lookup = () => () => 'pwned';\nvar __hone_host_evaluate = null;\nfunction run(ctx) { return ctx.task.id; }",
    );
    expect(a.result).toEqual({ ok: true, value: "t" });
  });

  it("a 5,000-deep result is refused cleanly (no RangeError)", async () => {
    const a = await attack(
      "function run(ctx, args) { " +
        benign +
        " let o = {}; const r = o; for (let i = 0; i < 5000; i++) { o.a = {}; o = o.a; } return r; }",
      { second: { ok: true } },
    );
    expect(a.result).toEqual({ ok: false, kind: "throw", error: "returned a value nested deeper than 40 levels" });
    expect(a.after).toEqual({ ok: true, value: "fine" });
  });

  it("twelve unawaited ctx.evaluate() calls: the budget holds and every evaluation ends before the call returns", async () => {
    const counted = countedEnv(6, 30);
    const a = await attack("function run(ctx) { for (let i = 0; i < 12; i++) ctx.evaluate(); return 'started'; }", { counted });
    expect(a.result).toEqual({ ok: true, value: "started" });
    expect(a.evaluator.started).toBe(6);
    expect(a.env.used).toBe(6);
    expect(a.runningAtReturn).toBe(0);
  });

  it("await Promise.all(30 × ctx.evaluate()) spends the budget of 6 and no more", async () => {
    const counted = countedEnv(6, 10);
    const a = await attack(
      "async function run(ctx) { const r = await Promise.all(Array.from({ length: 30 }, () => ctx.evaluate())); return [r.filter((x) => x.error).length, r.filter((x) => x.valid).length]; }",
      { counted },
    );
    expect(a.result).toEqual({ ok: true, value: [24, 6] });
    expect(a.env.used).toBe(6);
    expect(a.evaluator.started).toBe(6);
  });

  it("Promise.all(20 × ctx.probe()) runs at most the probe cap, uncharged", async () => {
    const a = await attack(
      "async function run(ctx) { const r = await Promise.all(Array.from({ length: 20 }, () => ctx.probe())); return r.filter((x) => x.valid).length; }",
      { maxProbes: 4 },
    );
    expect(a.result).toEqual({ ok: true, value: 4 });
    expect(a.evaluator.started).toBe(4);
    expect(a.env.used).toBe(0);
  });

  it("the descriptor route to the Function constructor reaches an inert stub", async () => {
    const a = await attack(
      "function run() { const F = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(function () {}), 'constructor').value; return F('return Date.now()')(); }",
    );
    expect(a.result).toEqual({
      ok: false,
      kind: "throw",
      error: "Function is not available: generated code may not build code from strings",
    });
  });

  it("CPU time holds after an await: a spin after ctx.probe() stops at the CPU limit", async () => {
    const a = await attack(`async function run(ctx, args) { ${benign} await ctx.probe(); for (;;) {} }`, {
      second: { ok: true },
    });
    expect(a.result).toEqual({ ok: false, kind: "timeout", error: `used more than ${limits.cpuMs} ms of CPU time` });
    expect(a.ticks).toBeGreaterThanOrEqual(2);
    expect(a.after).toEqual({ ok: true, value: "fine" });
  });
});

describe("more hangs", () => {
  it("a spin in a microtask left behind after returning is stopped, and the call reports it", async () => {
    const a = await attack(
      `function run(ctx, args) { ${benign} Promise.resolve().then(() => null).then(() => { for (;;) {} }); return 1; }`,
      { second: { ok: true } },
    );
    expect(a.result).toMatchObject({ ok: false, kind: "timeout" });
    expect(a.ticks).toBeGreaterThanOrEqual(2);
    expect(a.after).toEqual({ ok: true, value: "fine" });
  });

  it("a spin started by the module's top level after an await is stopped while loading", async () => {
    const a = await attack("(async () => { await null; for (;;) {} })();\nfunction run() { return 1; }");
    expect(a.result).toEqual({ ok: false, kind: "timeout", error: `used more than ${limits.cpuMs} ms of CPU time` });
    expect(a.ticks).toBeGreaterThanOrEqual(2);
  });

  it("a ping-pong of synchronous ctx.program reads is stopped by the wall clock", async () => {
    const a = await attack("function run(ctx) { let n = 0; for (;;) n += ctx.program.length; }");
    expect(a.result).toEqual({ ok: false, kind: "timeout", error: `did not finish within ${limits.wallMs} ms (wall clock)` });
    expect(a.ticks).toBeGreaterThanOrEqual(2);
  });

  it("a loop of large stageEdit calls is stopped and leaves a valid program", async () => {
    const a = await attack(
      "function run(ctx) { const big = '<<<<<<< SEARCH\\n' + 'x\\n'.repeat(100000); for (;;) ctx.stageEdit({ edits: big }); }",
    );
    expect(a.result).toMatchObject({ ok: false, kind: "timeout" });
    expect(a.env.program).toBe(PROGRAM);
    expect(a.ticks).toBeGreaterThanOrEqual(2);
  });

  it("a thenable that never calls back is stopped by the wall clock", async () => {
    const a = await attack("function run() { return { then() {} }; }");
    expect(a.result).toEqual({ ok: false, kind: "timeout", error: `did not finish within ${limits.wallMs} ms (wall clock)` });
  });

  it("a thenable whose then spins is stopped by the CPU limit", async () => {
    const a = await attack("function run() { return { then() { for (;;) {} } }; }");
    expect(a.result).toEqual({ ok: false, kind: "timeout", error: `used more than ${limits.cpuMs} ms of CPU time` });
  });

  it("a Proxy result whose ownKeys trap spins is stopped while hone copies it", async () => {
    const a = await attack("function run() { return new Proxy({}, { ownKeys() { for (;;) {} } }); }");
    expect(a.result).toEqual({ ok: false, kind: "timeout", error: `used more than ${limits.cpuMs} ms of CPU time` });
  });

  it("a thrown Proxy whose getPrototypeOf trap spins is stopped while hone describes it", async () => {
    const a = await attack("function run() { throw new Proxy({}, { getPrototypeOf() { for (;;) {} } }); }");
    expect(a.result).toEqual({ ok: false, kind: "timeout", error: `used more than ${limits.cpuMs} ms of CPU time` });
  });

  it("probing in an endless loop stops at the probe cap, then at the CPU limit", async () => {
    const a = await attack("async function run(ctx) { for (;;) await ctx.probe(); }", { maxProbes: 3 });
    expect(a.result).toMatchObject({ ok: false, kind: "timeout" });
    expect(a.evaluator.started).toBe(3);
  });

  it("a memory bomb after an await is contained and the next call gets a fresh isolate", async () => {
    const a = await attack(
      "async function run(ctx, args) { " +
        benign +
        " await ctx.probe(); const a = []; for (;;) a.push(new Array(1e5).fill(1.5)); }",
      { second: { ok: true }, limits: { ...limits, cpuMs: 5000, wallMs: 20_000 } },
    );
    expect(a.result).toEqual({ ok: false, kind: "memory", error: `ran out of memory (limit ${limits.memoryMb} MB)` });
    expect(a.after).toEqual({ ok: true, value: "fine" });
  });
});

describe("ctx abuse after the call returned", () => {
  it("a stageEdit from a continuation that outlives the call is refused: the program stays", async () => {
    const a = await attack("function run(ctx) { ctx.probe().then(() => ctx.stageEdit({ block: 'X = 7.0' })); return 1; }");
    expect(a.result).toEqual({ ok: true, value: 1 });
    expect(a.env.program).toBe(PROGRAM);
  });

  it("an evaluate from a continuation that outlives the call is never charged", async () => {
    const a = await attack("function run(ctx) { ctx.probe().then(() => ctx.evaluate()); return 1; }");
    expect(a.result).toEqual({ ok: true, value: 1 });
    expect(a.env.used).toBe(0);
    expect(a.evaluator.started).toBe(1);
  });

  it("two calls each firing ten evaluations spend the budget once", async () => {
    const counted = countedEnv(6, 5);
    const src =
      "async function run(ctx) { const r = await Promise.all(Array.from({ length: 10 }, () => ctx.evaluate())); return r.filter((x) => x.valid).length; }";
    const a = await attack(src, { counted, second: {} });
    expect(a.result).toEqual({ ok: true, value: 6 });
    expect(a.after).toEqual({ ok: true, value: 0 });
    expect(a.env.used).toBe(6);
  });
});

describe("values crossing the boundary", () => {
  it("an accessor in the result is refused without running its getter", async () => {
    const a = await attack("function run() { return { get x() { for (;;) {} } }; }");
    expect(a.result).toEqual({
      ok: false,
      kind: "throw",
      error: "returned an accessor (getter or setter) at result.x; return plain data (JSON)",
    });
  });

  it("toJSON is data, not a hook: a function-valued toJSON is refused", async () => {
    const a = await attack("function run() { return { toJSON() { return 'pwned'; } }; }");
    expect(a.result).toEqual({
      ok: false,
      kind: "throw",
      error: "returned a function at result.toJSON; return plain data (JSON)",
    });
  });

  it("a sparse array of length 1e9 stops at the output limit", async () => {
    const a = await attack("function run() { const a = []; a.length = 1e9; return a; }");
    expect(a.result).toEqual({
      ok: false,
      kind: "output",
      error: `returned more output than the limit of ${limits.maxResultChars} characters`,
    });
  });

  it("a cyclic array is refused with its path", async () => {
    const a = await attack("function run() { const a = [1]; a.push({ b: a }); return a; }");
    expect(a.result).toEqual({ ok: false, kind: "throw", error: "returned a cyclic value at result[1].b" });
  });

  it("a 10 MB error message reaches the host cut to 500 characters", async () => {
    const a = await attack("function run() { throw new Error('y'.repeat(1e7)); }");
    expect(a.result).toEqual({ ok: false, kind: "throw", error: "y".repeat(500) });
  });

  it.each([
    ["a symbol", "Symbol('s')", "Symbol(s)"],
    ["a bigint", "10n", "10"],
    ["null", "null", "null"],
    ["a plain object", "{ message: 42 }", "threw an object that is not an Error"],
  ])("throwing %s gives a plain string", async (_name, value, error) => {
    const a = await attack(`function run() { throw ${value}; }`);
    expect(a.result).toEqual({ ok: false, kind: "throw", error });
  });

  it("replacing JSON, Object and Array functions at top level does not change what hone copies", async () => {
    const a = await attack(
      "JSON.stringify = () => '{\"forged\":1}'; JSON.parse = () => ({ forged: 1 }); Object.keys = () => ['forged']; Array.isArray = () => false; Object.getOwnPropertyDescriptor = () => ({ value: 'forged' }); Object.getPrototypeOf = () => null;\nfunction run(ctx, args) { return { a: [1, 2], task: ctx.task.id, args }; }",
      { args: { n: 3 } },
    );
    expect(a.result).toEqual({ ok: true, value: { a: [1, 2], task: "t", args: { n: 3 } } });
  });

  it("patching Promise.prototype.then does not keep the call from finishing", async () => {
    const a = await attack("Promise.prototype.then = function () { for (;;) {} };\nasync function run() { return 'done'; }");
    expect(a.result).toEqual({ ok: true, value: "done" });
  });

  it("setters on Array.prototype indices and getters on Object.prototype keys are not triggered by the copy", async () => {
    const a = await attack(
      "Object.defineProperty(Array.prototype, '0', { set() { for (;;) {} } }); Object.defineProperty(Object.prototype, 'get', { get() { for (;;) {} } }); Object.defineProperty(Object.prototype, 'value', { get() { for (;;) {} } });\nfunction run() { return { list: [3, 4], nested: { k: 'v' } }; }",
    );
    expect(a.result).toEqual({ ok: true, value: { list: [3, 4], nested: { k: "v" } } });
  });

  it("a hostile Error.prepareStackTrace is never called while hone describes an error", async () => {
    const a = await attack("Error.prepareStackTrace = () => { for (;;) {} };\nfunction run() { throw new Error('plain'); }");
    expect(a.result).toEqual({ ok: false, kind: "throw", error: "plain" });
  });
});

describe("no code from strings, no clock", () => {
  it.each([
    ["AsyncFunction", "Object.getPrototypeOf(async function () {}).constructor"],
    ["GeneratorFunction", "Object.getPrototypeOf(function* () {}).constructor"],
    ["AsyncGeneratorFunction", "Object.getPrototypeOf(async function* () {}).constructor"],
    ["Function", "Function"],
    ["Function", "(() => 1)['constr' + 'uctor']"],
  ])("%s reached as %s is inert", async (what, expr) => {
    const a = await attack(`function run() { return (${expr})('return 1'); }`);
    expect(a.result).toEqual({
      ok: false,
      kind: "throw",
      error: `${what} is not available: generated code may not build code from strings`,
    });
  });

  it("eval, however named, is inert", async () => {
    const a = await attack("function run() { const e = globalThis['ev' + 'al']; return e('1 + 1'); }");
    expect(a.result).toEqual({
      ok: false,
      kind: "throw",
      error: "eval is not available: generated code may not build code from strings",
    });
  });

  it("the constructors cannot be put back", async () => {
    const a = await attack("function run() { Object.defineProperty(Function.prototype, 'constructor', { value: 1 }); }");
    expect(a.result).toEqual({ ok: false, kind: "throw", error: "Cannot redefine property: constructor" });
  });

  it("every route to Date gives the epoch; Intl (whose formatters read the clock) is absent", async () => {
    const a = await attack(
      "function run() { const D = Object.getOwnPropertyDescriptor(Date.prototype, 'constructor').value; return [new D().getTime(), new (new Date().constructor)().getTime(), Date.now(), Date(), typeof Intl]; }",
    );
    expect(a.result).toEqual({
      ok: true,
      value: [0, 0, 0, "Thu Jan 01 1970 00:00:00 GMT+0000 (Coordinated Universal Time)", "undefined"],
    });
  });
});

describe("generated middleware", () => {
  const view = { iteration: 1, budget: { used: 0, left: 3, total: 3 }, messages: [], params: {} };
  it("a hook throwing an Error with a looping message getter fails as a plain string", async () => {
    const m = new SandboxModule(
      "function beforeModel(v) { const e = new Error('x'); Object.defineProperty(e, 'message', { get() { for (;;) {} } }); throw e; }",
      "middlewares/x.js",
      limits,
    );
    modules.push(m);
    expect(await callHook(m, "beforeModel", [view])).toEqual({
      ok: false,
      error: "throw: threw Error whose message is a getter, which hone does not run",
    });
  });
});
