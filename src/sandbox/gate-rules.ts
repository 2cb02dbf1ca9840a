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
  "no-constructor":
    'no .constructor, ["constructor"], a "constructor" string or destructuring it: constructor chains lead to code from strings',
  "no-proto":
    "no __proto__, prototype writes or prototype-changing calls; .prototype only as the start of a longer chain (Array.prototype.slice), never held or passed as a value",
  "no-with": "no with statements",
  "no-computed-on-root":
    "no computed member access (x[…], literal keys included) or computed destructuring on ctx, this, arguments or a global namespace (globalThis, Object, Reflect, Function, Math, JSON, Promise, Symbol)",
  "no-getter-on-global": "no accessors defined on the global object or via __defineGetter__/__lookupGetter__",
  "no-callee": "no arguments.callee or .caller",
  "no-reflection": "no Proxy, Reflect, Object.getPrototypeOf or property descriptors (getOwnPropertyDescriptor[s])",
  "no-global-this": "no this outside a method, class field or static block: elsewhere it can be the global object",
  "no-global-var": "a top-level var may not take the name of a global: it would start out holding the global itself",
  "module-count":
    "at most 16 generated JavaScript modules (custom_tools/*.js and middleware listings together) per package: each runs in an isolate of its own, kept for the whole rollout",
  "missing-entry":
    "a tool must define function run(ctx, args); a middleware at least one of beforeModel, afterModel, beforeTool, afterTool",
} as const;
export type GateRule = keyof typeof GATE_RULES;

/** Free identifiers generated code may use: the language's safe built-ins. */
export const ALLOWED_GLOBALS = new Set([
  // What Promise.any rejects with: code handling that rejection names it.
  "AggregateError",
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

/** Global namespaces on which computed member access (x[expr]) is refused, when the name is not shadowed. */
export const COMPUTED_ROOTS = new Set(["globalThis", "Object", "Reflect", "Function", "Math", "JSON", "Promise", "Symbol"]);

/** Member names that read prototypes or property descriptors (values reached without a member access). */
export const REFLECTION_CALLS = new Set(["getPrototypeOf", "getOwnPropertyDescriptor", "getOwnPropertyDescriptors"]);

/**
 * The names on the isolate's global object once hone's bootstrap has run (checked against a live isolate by the
 * tests). A top-level `var` of one of these names would not shadow it but start out holding it.
 */
export const ISOLATE_GLOBALS = new Set([
  "AggregateError",
  "Array",
  "ArrayBuffer",
  "BigInt",
  "BigInt64Array",
  "BigUint64Array",
  "Boolean",
  "DataView",
  "Date",
  "Error",
  "EvalError",
  "Float32Array",
  "Float64Array",
  "Function",
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
  "Proxy",
  "RangeError",
  "ReferenceError",
  "Reflect",
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
  "escape",
  "eval",
  "globalThis",
  "isFinite",
  "isNaN",
  "parseFloat",
  "parseInt",
  "undefined",
  "unescape",
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
/** Generated JavaScript modules one package may carry: each holds up to its isolate's heap limit for a whole rollout. */
export const MAX_GENERATED_MODULES = 16;
