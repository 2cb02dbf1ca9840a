/**
 * The static gate's rules, in one place. Each refusal names its rule id and the source position. The isolate is
 * the security boundary; the gate refuses code that reaches for what the sandbox would have to contain, so that a
 * proposer learns early and the adversarial cases fail twice over.
 */
export const GATE_RULES = {
  syntax: "the code must parse as a plain script (ES2024, no module syntax)",
  size: "generated code is limited to 64 KB",
  "no-import": "no import, import() or import.meta: generated code has no modules",
  "unknown-global": "only the language's own built-ins and what ctx gives are available",
  "no-eval": "no eval, Function or other code built from strings",
  "no-constructor": "no .constructor access: constructor chains lead out of the sandbox's objects",
  "no-proto": "no __proto__, prototype writes or prototype-changing calls",
  "no-with": "no with statements",
  "no-computed-on-root": "no computed member access on ctx, this, globalThis, arguments or built-in namespaces",
  "no-getter-on-global": "no accessors defined on the global object or via __defineGetter__/__lookupGetter__",
  "no-callee": "no arguments.callee or .caller",
  "no-reflection": "no Proxy or Reflect",
  "missing-entry":
    "a tool must define function run(ctx, args); a middleware at least one of beforeModel, afterModel, beforeTool, afterTool",
} as const;
export type GateRule = keyof typeof GATE_RULES;

/** Free identifiers generated code may use: the language's safe built-ins. */
export const ALLOWED_GLOBALS = new Set([
  "Array",
  "ArrayBuffer",
  "BigInt",
  "BigInt64Array",
  "BigUint64Array",
  "Boolean",
  "DataView",
  "Error",
  "EvalError",
  "Float32Array",
  "Float64Array",
  "Infinity",
  "Int16Array",
  "Int32Array",
  "Int8Array",
  "JSON",
  "Map",
  "Math",
  "NaN",
  "Number",
  "Object",
  "Promise",
  "RangeError",
  "ReferenceError",
  "RegExp",
  "Set",
  "String",
  "Symbol",
  "SyntaxError",
  "TypeError",
  "URIError",
  "Uint16Array",
  "Uint32Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "WeakMap",
  "WeakSet",
  "decodeURI",
  "decodeURIComponent",
  "encodeURI",
  "encodeURIComponent",
  "isFinite",
  "isNaN",
  "parseFloat",
  "parseInt",
  "undefined",
  "arguments",
]);

/** Names refused with a rule of their own (a clearer message than unknown-global). */
export const NAMED_REFUSALS: Record<string, GateRule> = {
  eval: "no-eval",
  Function: "no-eval",
  Proxy: "no-reflection",
  Reflect: "no-reflection",
};

/** Roots on which computed member access (x[expr]) is refused. */
export const COMPUTED_ROOTS = new Set([
  "ctx",
  "globalThis",
  "arguments",
  "Object",
  "Reflect",
  "Function",
  "Math",
  "JSON",
  "Promise",
  "Symbol",
]);

/** Calls that change prototypes or define accessors. */
export const PROTO_CALLS = new Set([
  "setPrototypeOf",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
]);

export const TOOL_ENTRY = "run";
export const MIDDLEWARE_HOOKS = ["beforeModel", "afterModel", "beforeTool", "afterTool"] as const;
export const MAX_SOURCE_BYTES = 64 * 1024;
