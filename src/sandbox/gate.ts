import { createRequire } from "node:module";
import type { Node } from "acorn";
import type { AncestorVisitors } from "acorn-walk";
import {
  ALLOWED_GLOBALS,
  COMPUTED_ROOTS,
  GATE_RULES,
  type GateRule,
  MAX_SOURCE_BYTES,
  MIDDLEWARE_HOOKS,
  NAMED_REFUSALS,
  PROTO_CALLS,
  REFLECTION_CALLS,
  TOOL_ENTRY,
} from "./gate-rules.ts";
import { type ScopeFacts, scopeFacts } from "./gate-scope.ts";

// The parser and its walker are loaded by the first gate, not with hone: a run whose harness carries no generated
// code never needs them (a third of a megabyte of code to parse at every start).
const load = createRequire(import.meta.url);
let parser: typeof import("acorn") | undefined;
let walker: typeof import("acorn-walk") | undefined;
const acorn = () => (parser ??= load("acorn") as typeof import("acorn"));
const acornWalk = () => (walker ??= load("acorn-walk") as typeof import("acorn-walk"));

export interface Refusal {
  rule: GateRule;
  message: string;
  line: number;
  column: number;
}

export type CodeKind = "tool" | "middleware";

// Minimal shapes of the ESTree nodes the gate inspects.
type AnyNode = Node & Record<string, unknown>;
interface Loc {
  start: { line: number; column: number };
}

const at = (n: Node): { line: number; column: number } => {
  const loc = (n as unknown as { loc?: Loc }).loc;
  return { line: loc?.start.line ?? 0, column: (loc?.start.column ?? 0) + 1 };
};

/** The name a key spells: an identifier (when not computed), a string literal or a template without expressions. */
function keyName(key: AnyNode, computed: boolean): string | undefined {
  if (!computed && key.type === "Identifier") return key.name as string;
  if (key.type === "Literal" && typeof key.value === "string") return key.value;
  if (key.type === "TemplateLiteral" && (key.expressions as unknown[]).length === 0)
    return ((key.quasis as AnyNode[])[0]?.value as { cooked?: string } | undefined)?.cooked;
  return undefined;
}

const propName = (member: AnyNode) => keyName(member.property as AnyNode, member.computed === true);

/** Identifiers that are references or bindings (not property names, keys or labels). */
function isReference(node: AnyNode, parent: AnyNode | undefined): boolean {
  if (!parent) return true;
  if (
    (parent.type === "MemberExpression" || parent.type === "MethodDefinition" || parent.type === "PropertyDefinition") &&
    parent.property === node &&
    !parent.computed
  )
    return false;
  if (
    (parent.type === "Property" || parent.type === "MethodDefinition" || parent.type === "PropertyDefinition") &&
    parent.key === node &&
    !parent.computed
  ) {
    return parent.type === "Property" && parent.shorthand === true;
  }
  if (parent.type === "LabeledStatement" || parent.type === "BreakStatement" || parent.type === "ContinueStatement") return false;
  if (parent.type === "MetaProperty") return false;
  return true;
}

/** Whether `this` here is bound by a method, a class field or a static block (not possibly the global object). */
function thisIsBound(ancestors: AnyNode[]): boolean {
  for (let i = ancestors.length - 2; i >= 0; i--) {
    const n = ancestors[i] as AnyNode;
    const parent = ancestors[i - 1];
    if (n.type === "StaticBlock" || n.type === "PropertyDefinition") return true;
    if (n.type === "FunctionExpression" || n.type === "FunctionDeclaration")
      return (
        parent?.type === "MethodDefinition" ||
        (parent?.type === "Property" && (parent.method === true || parent.kind === "get" || parent.kind === "set"))
      );
  }
  return false;
}

/** What the object of a computed lookup is, when it is one the rule protects. */
function protectedRoot(object: AnyNode, facts: ScopeFacts): string | undefined {
  if (object.type === "ThisExpression") return "this";
  if (object.type !== "Identifier") return undefined;
  const name = object.name as string;
  if (facts.ctx.has(object)) return name;
  if (name === "arguments") return name;
  if (facts.free.has(object) && COMPUTED_ROOTS.has(name)) return name;
  return undefined;
}

/** `globalThis` not shadowed, or `this` where it can be the global object. */
const isGlobalObject = (n: AnyNode | undefined, facts: ScopeFacts, ancestors: AnyNode[]) =>
  n !== undefined &&
  ((n.type === "ThisExpression" && !thisIsBound(ancestors)) ||
    (n.type === "Identifier" && n.name === "globalThis" && facts.free.has(n)));

type Refuse = (rule: GateRule, node: Node | undefined, detail?: string) => void;

function visitors(refuse: Refuse, facts: ScopeFacts): AncestorVisitors<unknown> {
  const computedPattern = (pattern: AnyNode, source: AnyNode | null | undefined) => {
    if (pattern.type !== "ObjectPattern" || !source) return;
    const root = protectedRoot(source, facts);
    if (!root) return;
    for (const p of pattern.properties as AnyNode[])
      if (p.type === "Property" && p.computed) refuse("no-computed-on-root", p, `{ [expr]: … } = ${root}`);
  };
  // `X.prototype` only as the start of a longer chain (Array.prototype.slice.call): held in a name or passed on, a
  // prototype could be written through that name, out of the gate's sight. Assignments to it are refused as writes.
  const prototypeAsValue = (node: AnyNode, ancestors: AnyNode[]) => {
    const parent = ancestors[ancestors.length - 2];
    if (parent?.type === "MemberExpression" && parent.object === node) return;
    if (parent?.type === "AssignmentExpression" && parent.left === node) return;
    refuse("no-proto", node, "….prototype as a value (only as the start of a longer chain: Array.prototype.slice)");
  };
  // The string "constructor" anywhere but as a member's key (refused there by MemberExpression) or a key an
  // object literal or class defines: `"constructor".trim()` and `` `constructor` `` are the string too.
  const constructorString = (node: Node, ancestors: AnyNode[]) => {
    const parent = ancestors[ancestors.length - 2];
    if (parent?.type === "MemberExpression" && parent.property === node) return;
    const definesKey = (parent?.type === "MethodDefinition" || parent?.type === "PropertyDefinition") && parent.key === node;
    const ownKey = parent?.type === "Property" && parent.key === node && ancestors.at(-3)?.type === "ObjectExpression";
    if (!definesKey && !ownKey) refuse("no-constructor", node, 'the string "constructor"');
  };
  return {
    ImportExpression: (n) => refuse("no-import", n),
    // import.meta only: new.target reads nothing beyond the function itself.
    MetaProperty: (n) => {
      if (((n as unknown as AnyNode).meta as AnyNode).name === "import") refuse("no-import", n, "import.meta");
    },
    WithStatement: (n) => refuse("no-with", n),
    ThisExpression: (n, _s, ancestors) => {
      if (!thisIsBound(ancestors as AnyNode[])) refuse("no-global-this", n);
    },
    Identifier: (n, _s, ancestors) => {
      const node = n as unknown as AnyNode;
      if (!isReference(node, ancestors[ancestors.length - 2] as AnyNode | undefined)) return;
      const name = node.name as string;
      if (name === "__proto__") return refuse("no-proto", n);
      const named = NAMED_REFUSALS[name];
      if (named) return refuse(named, n, name);
      if (facts.free.has(n) && !ALLOWED_GLOBALS.has(name)) refuse("unknown-global", n, name);
    },
    Literal: (n, _s, ancestors) => {
      if ((n as unknown as AnyNode).value === "constructor") constructorString(n, ancestors as AnyNode[]);
    },
    TemplateLiteral: (n, _s, ancestors) => {
      if (keyName(n as unknown as AnyNode, true) === "constructor") constructorString(n, ancestors as AnyNode[]);
    },
    ObjectPattern: (n) => {
      for (const p of (n as unknown as AnyNode).properties as AnyNode[]) {
        if (p.type !== "Property") continue;
        const name = keyName(p.key as AnyNode, p.computed === true);
        if (name === "constructor") refuse("no-constructor", p, "destructuring constructor");
        if (name === "__proto__") refuse("no-proto", p, "destructuring __proto__");
        if (name === "prototype") refuse("no-proto", p, "destructuring prototype");
        if (name && REFLECTION_CALLS.has(name)) refuse("no-reflection", p, `destructuring ${name}`);
        if (name && PROTO_CALLS.has(name)) refuse("no-proto", p, `destructuring ${name}`);
      }
    },
    VariableDeclarator: (n) => {
      const d = n as unknown as AnyNode;
      computedPattern(d.id as AnyNode, d.init as AnyNode | null);
    },
    MemberExpression: (n, _s, ancestors) => {
      const node = n as unknown as AnyNode;
      const name = propName(node);
      const object = node.object as AnyNode;
      if (name === "prototype") prototypeAsValue(node, ancestors as AnyNode[]);
      if (name === "constructor") refuse("no-constructor", n);
      if (name === "__proto__") refuse("no-proto", n);
      if (name === "callee" || name === "caller") refuse("no-callee", n, name);
      if (name && PROTO_CALLS.has(name))
        refuse(name.includes("Getter") || name.includes("Setter") ? "no-getter-on-global" : "no-proto", n, name);
      if (name && REFLECTION_CALLS.has(name)) refuse("no-reflection", n, name);
      if (node.computed) {
        const root = protectedRoot(object, facts);
        if (root) refuse("no-computed-on-root", n, `${root}[…]`);
        else if (name === undefined && object.type === "MemberExpression" && propName(object) === "prototype")
          refuse("no-computed-on-root", n, "….prototype[…]");
      }
    },
    AssignmentExpression: (n, _s, ancestors) => {
      const node = n as unknown as AnyNode;
      const left = node.left as AnyNode;
      computedPattern(left, node.right as AnyNode);
      if (left.type !== "MemberExpression") return;
      const name = propName(left);
      if (name === "prototype" || name === "__proto__") refuse("no-proto", n, `assignment to .${name}`);
      const inner = left.object as AnyNode;
      if (inner.type === "MemberExpression" && propName(inner) === "prototype")
        refuse("no-proto", n, "assignment into a prototype");
      if (isGlobalObject(inner, facts, ancestors as AnyNode[])) refuse("no-getter-on-global", n, "writes to the global object");
    },
    CallExpression: (n, _s, ancestors) => {
      const callee = (n as unknown as AnyNode).callee as AnyNode;
      const args = (n as unknown as AnyNode).arguments as AnyNode[];
      if (callee.type !== "MemberExpression") return;
      const name = propName(callee);
      const target = args[0];
      if ((name === "defineProperty" || name === "defineProperties") && isGlobalObject(target, facts, ancestors as AnyNode[]))
        refuse("no-getter-on-global", n, name);
      if (
        (name === "defineProperty" || name === "defineProperties" || name === "assign") &&
        target?.type === "MemberExpression" &&
        propName(target) === "prototype"
      )
        refuse("no-proto", n, `${name} on a prototype`);
    },
    NewExpression: (n) => {
      const callee = (n as unknown as AnyNode).callee as AnyNode;
      if (callee.type === "Identifier" && callee.name === "Function") refuse("no-eval", n, "new Function");
    },
  };
}

function parseOrRefuse(source: string, refusals: Refusal[]): Node | undefined {
  try {
    return acorn().parse(source, { ecmaVersion: 2024, sourceType: "script", locations: true, ranges: true });
  } catch (err) {
    const e = err as SyntaxError & { loc?: { line: number; column: number } };
    const rule: GateRule = /import|export/.test(e.message) ? "no-import" : "syntax";
    refusals.push({
      rule,
      message: `${GATE_RULES[rule]}: ${e.message}`,
      line: e.loc?.line ?? 1,
      column: (e.loc?.column ?? 0) + 1,
    });
    return undefined;
  }
}

/** Runs every gate rule over a source; an empty list means the code may run in the sandbox. */
export function gate(source: string, kind: CodeKind): Refusal[] {
  const refusals: Refusal[] = [];
  const refuse: Refuse = (rule, node, detail) => {
    const pos = node ? at(node) : { line: 1, column: 1 };
    refusals.push({ rule, message: detail ? `${GATE_RULES[rule]}: ${detail}` : GATE_RULES[rule], ...pos });
  };
  if (Buffer.byteLength(source) > MAX_SOURCE_BYTES) {
    refuse("size", undefined, `${Buffer.byteLength(source)} bytes`);
    return refusals;
  }
  const ast = parseOrRefuse(source, refusals);
  if (!ast) return refusals;
  const facts = scopeFacts(ast);
  for (const id of facts.globalVars) refuse("no-global-var", id, (id as unknown as AnyNode).name as string);
  const walk = acornWalk();
  walk.ancestor(ast, visitors(refuse, facts), { ...walk.base });

  const topLevel = new Set(topLevelNames(ast));
  if (kind === "tool" && !topLevel.has(TOOL_ENTRY)) refuse("missing-entry", undefined, "no top-level function run(ctx, args)");
  if (kind === "middleware" && !MIDDLEWARE_HOOKS.some((h) => topLevel.has(h)))
    refuse("missing-entry", undefined, `no top-level ${MIDDLEWARE_HOOKS.join(", ")}`);
  refusals.sort((a, b) => a.line - b.line || a.column - b.column);
  return refusals;
}

function topLevelNames(ast: Node): string[] {
  return ((ast as unknown as AnyNode).body as AnyNode[]).flatMap((s) => {
    if (s.type === "FunctionDeclaration") return [(s.id as AnyNode).name as string];
    if (s.type === "VariableDeclaration")
      return (s.declarations as AnyNode[])
        .filter((d) => (d.id as AnyNode).type === "Identifier")
        .map((d) => (d.id as AnyNode).name as string);
    return [];
  });
}

/** Top-level function names a module defines (after it passed the gate). */
export function topLevelFunctions(source: string): string[] {
  return topLevelNames(acorn().parse(source, { ecmaVersion: 2024, sourceType: "script" }));
}

export function formatRefusal(file: string, r: Refusal): string {
  return `${file}:${r.line}:${r.column}: [${r.rule}] ${r.message}`;
}
