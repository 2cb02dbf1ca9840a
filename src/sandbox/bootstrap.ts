import { COPY_CODE } from "./bootstrap-copy.ts";

/**
 * Trusted code run first in every sandbox context, before any generated code. Its script's value is `init`, which
 * the host calls once with its functions (never put on the global object); `init` captures the built-ins hone
 * relies on, removes or neuters what generated code may not have, and returns hone's entry, `hone(op, …)`, which
 * lives only in this closure and in the host's Reference to it, so no name the module defines can replace it.
 * Every operation is synchronous, so each runs under isolated-vm's timeout, microtasks included:
 *
 * - `hone("load", source)` evaluates the module (an indirect eval inside a try, so a throw during loading is turned
 *   into a string here) together with a lookup of its entry functions, and answers an envelope;
 * - `hone("invoke", callId, name, argsJson)` starts one entry function; when it settles, the envelope goes to the
 *   host through `hostDone(callId, envelope)`;
 * - `hone("deliver", ticket, json)` settles the promise of a ctx.probe() or ctx.evaluate() that the host finished.
 *   Nothing else ever runs the module's code: a continuation runs only inside a delivery the host started.
 *
 * Envelopes are strings: `v` + JSON of the result, `e` + an error message, or `o` + an output-limit message. Every
 * value leaving the isolate is copied here, under the isolate's own CPU and memory limits (see bootstrap-copy.ts).
 */
export const BOOTSTRAP = `(function init(hostProgram, hostStage, hostStart, hostDone, taskJson, seed, maxResultChars, maxEditJson) {
  "use strict";
  const g = globalThis;
  const ObjectProto = Object.prototype;
  const getProto = Object.getPrototypeOf;
  const getOwnDesc = Object.getOwnPropertyDescriptor;
  const defineProperty = Object.defineProperty;
  const keysOf = Object.keys;
  const hasOwn = Object.hasOwn;
  const isArray = Array.isArray;
  const freeze = Object.freeze;
  const isFiniteNumber = Number.isFinite;
  const toStr = String;
  const rApply = Reflect.apply;
  const rConstruct = Reflect.construct;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const sliceStr = String.prototype.slice;
  const indexOfStr = String.prototype.indexOf;
  const realEval = g.eval;
  const TypeErr = TypeError;
  const PromiseCtor = Promise;
  const promiseResolve = Promise.resolve;
  const promiseThen = Promise.prototype.then;

  for (const k of ["SharedArrayBuffer", "Atomics", "WebAssembly", "FinalizationRegistry", "WeakRef", "console", "Intl"]) delete g[k];

  // No code from strings: eval, Function and the constructors of async functions and generators, however reached
  // (global names, .constructor, descriptors), are inert stubs that throw.
  const inert = (what) => function () { throw new TypeErr(what + " is not available: generated code may not build code from strings"); };
  const protos = [
    ["Function", getProto(function () {})],
    ["AsyncFunction", getProto(async function () {})],
    ["GeneratorFunction", getProto(function* () {})],
    ["AsyncGeneratorFunction", getProto(async function* () {})],
  ];
  for (const [what, proto] of protos) {
    const stub = inert(what);
    defineProperty(stub, "prototype", { value: proto, writable: false });
    defineProperty(proto, "constructor", { value: stub, writable: false, configurable: false, enumerable: false });
    if (what === "Function") defineProperty(g, "Function", { value: stub, writable: false, configurable: false, enumerable: false });
  }
  defineProperty(g, "eval", { value: inert("eval"), writable: false, configurable: false, enumerable: false });

  // No clock: new Date() is the epoch, Date() its string, Date.now() is 0; the real Date is kept only here.
  const RealDate = g.Date;
  const dateToString = RealDate.prototype.toString;
  const FixedDate = function Date(...args) {
    if (new.target === undefined) return rApply(dateToString, rConstruct(RealDate, [0]), []);
    return rConstruct(RealDate, args.length === 0 ? [0] : args);
  };
  FixedDate.now = () => 0;
  FixedDate.UTC = RealDate.UTC;
  FixedDate.parse = RealDate.parse;
  defineProperty(FixedDate, "prototype", { value: RealDate.prototype, writable: false });
  defineProperty(RealDate.prototype, "constructor", { value: FixedDate, writable: false, configurable: false, enumerable: false });
  defineProperty(g, "Date", { value: FixedDate, writable: false, configurable: false, enumerable: false });

  // Seeded randomness, so a rollout replays exactly.
  let s = (seed >>> 0) || 1;
  Math.random = function random() {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  ${COPY_CODE}

  const deepFreeze = (v) => {
    if (v !== null && typeof v === "object") {
      for (const k of keysOf(v)) deepFreeze(v[k]);
      freeze(v);
    }
    return v;
  };
  const task = hostProgram ? deepFreeze(parse(taskJson)) : undefined;
  // An async ctx call: the host answers at once with a refusal, or with a ticket it settles later by "deliver".
  let waiting = { __proto__: null };
  function asyncCall(kind) {
    const ticket = hostStart(kind);
    if (typeof ticket === "string") return rApply(promiseResolve, PromiseCtor, [parse(ticket)]);
    return new PromiseCtor((resolve) => {
      waiting[ticket] = resolve;
    });
  }
  function deliver(ticket, json) {
    const resolve = waiting[ticket];
    if (resolve === undefined) return;
    delete waiting[ticket];
    resolve(parse(json));
  }

  function makeCtx() {
    if (!hostProgram) return undefined;
    return freeze({
      get program() { return hostProgram(); },
      task,
      stageEdit(edit) {
        const json = copyOut(edit === undefined ? null : edit, "edit", maxEditJson);
        if (json[0] === "o") return { ok: false, error: "the edit is more than " + maxEditJson + " characters as JSON; send a smaller edit" };
        if (json[0] !== "v") return { ok: false, error: "stageEdit takes plain data: " + rApply(sliceStr, json, [1]) };
        return parse(hostStage(rApply(sliceStr, json, [1])));
      },
      probe() { return asyncCall("probe"); },
      evaluate() { return asyncCall("evaluate"); },
    });
  }

  let lookup;
  const LOOKUP = "\\n;(function (name) { switch (name) {" +
    ["run", "beforeModel", "afterModel", "beforeTool", "afterTool"]
      .map((n) => " case " + stringify(n) + ": return typeof " + n + " === 'function' ? " + n + " : undefined;").join("") +
    " default: return undefined; } })";

  function load(source) {
    if (lookup !== undefined) return "ehone: the module is already loaded";
    try {
      lookup = (0, realEval)(toStr(source) + LOOKUP);
      return "vnull";
    } catch (err) {
      lookup = null;
      return "e" + describe(err);
    }
  }

  async function call(name, argsJson) {
    try {
      if (typeof lookup !== "function") return "ehone: the module did not load";
      const fn = lookup(name);
      if (typeof fn !== "function") return "e" + name + " is not defined as a function";
      const args = parse(argsJson);
      const out = name === "run" ? await fn(makeCtx(), args[0]) : await rApply(fn, undefined, args);
      return copyOut(out, "result", maxResultChars);
    } catch (err) {
      return "e" + describe(err);
    }
  }

  function invoke(callId, name, argsJson) {
    waiting = { __proto__: null };
    const done = (envelope) => hostDone(callId, envelope);
    rApply(promiseThen, call(name, argsJson), [done, (err) => done("e" + describe(err))]);
    return "started";
  }

  return function hone(op, a, b, c) {
    if (op === "invoke") return invoke(a, b, c);
    if (op === "deliver") return deliver(a, b);
    if (op === "load") return load(a);
    return undefined;
  };
})`;
