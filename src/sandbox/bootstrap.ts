/**
 * Trusted code run first in every sandbox context. It captures the built-ins hone relies on before generated code
 * can touch them, removes what generated code may not have (shared memory, WebAssembly, the clock, real
 * randomness), and defines the entry that hone calls: `__hone_invoke(name, argsJson)` → JSON text.
 */
export const BOOTSTRAP = `
(function () {
  "use strict";
  const g = globalThis;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isArray = Array.isArray;
  const getProto = Object.getPrototypeOf;
  const freeze = Object.freeze;
  const host = {
    program: g.__hone_host_program,
    stage: g.__hone_host_stage,
    probe: g.__hone_host_probe,
    evaluate: g.__hone_host_evaluate,
    task: g.__hone_host_task,
    seed: g.__hone_host_seed,
  };
  for (const k of Object.getOwnPropertyNames(g)) if (k.startsWith("__hone_host_")) delete g[k];
  for (const k of ["SharedArrayBuffer", "Atomics", "WebAssembly", "FinalizationRegistry", "WeakRef", "console"]) delete g[k];

  // No clock: Date without arguments is the epoch, Date.now() is 0.
  const RealDate = g.Date;
  const FixedDate = function (...args) {
    return args.length === 0 ? new RealDate(0) : new RealDate(...args);
  };
  FixedDate.now = () => 0;
  FixedDate.UTC = RealDate.UTC;
  FixedDate.parse = RealDate.parse;
  FixedDate.prototype = RealDate.prototype;
  g.Date = FixedDate;

  // Seeded randomness, so a rollout replays exactly.
  let s = (host.seed >>> 0) || 1;
  Math.random = function () {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  function check(value, path, seen, depth) {
    const t = typeof value;
    if (t === "function") throw new TypeError("returned a function at " + path + "; return plain data (JSON)");
    if (t === "symbol" || t === "bigint") throw new TypeError("returned a " + t + " at " + path + "; return plain data (JSON)");
    if (t === "number" && !isFinite(value)) throw new TypeError("returned a non-finite number at " + path);
    if (value === null || t !== "object") return;
    if (depth > 40) throw new TypeError("returned a value nested deeper than 40 levels");
    if (seen.has(value)) throw new TypeError("returned a cyclic value at " + path);
    const proto = getProto(value);
    if (!isArray(value) && proto !== Object.prototype && proto !== null) throw new TypeError("returned an object that is not plain data at " + path);
    seen.add(value);
    for (const k of Object.keys(value)) check(value[k], path + "." + k, seen, depth + 1);
    seen.delete(value);
  }

  function makeCtx() {
    if (!host.program) return undefined;
    const task = freeze(parse(host.task));
    return freeze({
      get program() { return host.program(); },
      task,
      stageEdit(edit) { return parse(host.stage(stringify(edit === undefined ? null : edit))); },
      probe() { return host.probe.apply(undefined, [], { result: { promise: true, copy: true } }).then(parse); },
      evaluate() { return host.evaluate.apply(undefined, [], { result: { promise: true, copy: true } }).then(parse); },
    });
  }

  g.__hone_invoke = async function (name, argsJson) {
    const args = parse(argsJson);
    const fn = g.__hone_lookup(name);
    if (typeof fn !== "function") throw new TypeError(name + " is not defined as a function");
    const out = name === "run" ? await fn(makeCtx(), args[0]) : await fn(...args);
    check(out, "result", new Set(), 0);
    return out === undefined ? "null" : stringify(out);
  };
})();
`;

/** Run after the generated code: resolves its top-level functions by name without any string evaluation. */
export const LOOKUP = `
globalThis.__hone_lookup = function (name) {
  switch (name) {
    case "run": return typeof run === "function" ? run : undefined;
    case "beforeModel": return typeof beforeModel === "function" ? beforeModel : undefined;
    case "afterModel": return typeof afterModel === "function" ? afterModel : undefined;
    case "beforeTool": return typeof beforeTool === "function" ? beforeTool : undefined;
    case "afterTool": return typeof afterTool === "function" ? afterTool : undefined;
    default: return undefined;
  }
};
`;
