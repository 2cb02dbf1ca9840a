import { type Node, parse } from "acorn";
import { type AncestorVisitors, ancestor, base } from "acorn-walk";
import {
  ALLOWED_GLOBALS,
  COMPUTED_ROOTS,
  GATE_RULES,
  type GateRule,
  MAX_SOURCE_BYTES,
  MIDDLEWARE_HOOKS,
  NAMED_REFUSALS,
  PROTO_CALLS,
  TOOL_ENTRY,
} from "./gate-rules.ts";

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

function propName(member: AnyNode): string | undefined {
  const p = member.property as AnyNode;
  if (!member.computed && p.type === "Identifier") return p.name as string;
  if (p.type === "Literal" && typeof p.value === "string") return p.value;
  if (p.type === "TemplateLiteral" && (p.expressions as unknown[]).length === 0)
    return ((p.quasis as AnyNode[])[0]?.value as { cooked?: string } | undefined)?.cooked;
  return undefined;
}

function rootName(n: AnyNode): string | undefined {
  if (n.type === "Identifier") return n.name as string;
  if (n.type === "ThisExpression") return "this";
  return undefined;
}

/** Names bound anywhere in the program (functions, parameters, variables, classes, catch clauses). */
function declaredNames(ast: Node): Set<string> {
  const names = new Set<string>();
  const addPattern = (p: AnyNode | null | undefined): void => {
    if (!p) return;
    switch (p.type) {
      case "Identifier":
        names.add(p.name as string);
        break;
      case "ObjectPattern":
        for (const prop of p.properties as AnyNode[])
          addPattern((prop.type === "RestElement" ? prop.argument : prop.value) as AnyNode);
        break;
      case "ArrayPattern":
        for (const el of p.elements as (AnyNode | null)[]) addPattern(el);
        break;
      case "RestElement":
        addPattern(p.argument as AnyNode);
        break;
      case "AssignmentPattern":
        addPattern(p.left as AnyNode);
        break;
    }
  };
  const fn = (n: AnyNode) => {
    if (n.id) addPattern(n.id as AnyNode);
    for (const p of n.params as AnyNode[]) addPattern(p);
  };
  ancestor(ast, {
    VariableDeclarator: (n) => addPattern((n as unknown as AnyNode).id as AnyNode),
    FunctionDeclaration: (n) => fn(n as unknown as AnyNode),
    FunctionExpression: (n) => fn(n as unknown as AnyNode),
    ArrowFunctionExpression: (n) => fn(n as unknown as AnyNode),
    ClassDeclaration: (n) => addPattern((n as unknown as AnyNode).id as AnyNode),
    ClassExpression: (n) => addPattern((n as unknown as AnyNode).id as AnyNode),
    CatchClause: (n) => addPattern((n as unknown as AnyNode).param as AnyNode),
    LabeledStatement: (n) => names.add(((n as unknown as AnyNode).label as AnyNode).name as string),
  });
  return names;
}

/** Identifiers that are references (not property names, keys or labels). */
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

/** Runs every gate rule over a source; an empty list means the code may run in the sandbox. */
export function gate(source: string, kind: CodeKind): Refusal[] {
  const refusals: Refusal[] = [];
  const refuse = (rule: GateRule, node: Node | undefined, detail?: string) => {
    const pos = node ? at(node) : { line: 1, column: 1 };
    refusals.push({ rule, message: detail ? `${GATE_RULES[rule]}: ${detail}` : GATE_RULES[rule], ...pos });
  };
  if (Buffer.byteLength(source) > MAX_SOURCE_BYTES) {
    refuse("size", undefined, `${Buffer.byteLength(source)} bytes`);
    return refusals;
  }
  let ast: Node;
  try {
    ast = parse(source, { ecmaVersion: 2024, sourceType: "script", locations: true, allowReturnOutsideFunction: false });
  } catch (err) {
    const e = err as SyntaxError & { loc?: { line: number; column: number } };
    if (/import|export/.test(e.message))
      refusals.push({
        rule: "no-import",
        message: `${GATE_RULES["no-import"]}: ${e.message}`,
        line: e.loc?.line ?? 1,
        column: (e.loc?.column ?? 0) + 1,
      });
    else
      refusals.push({
        rule: "syntax",
        message: `${GATE_RULES.syntax}: ${e.message}`,
        line: e.loc?.line ?? 1,
        column: (e.loc?.column ?? 0) + 1,
      });
    return refusals;
  }
  const declared = declaredNames(ast);

  const visitors: AncestorVisitors<unknown> = {
    ImportExpression: (n) => refuse("no-import", n),
    MetaProperty: (n) => refuse("no-import", n, "import.meta"),
    WithStatement: (n) => refuse("no-with", n),
    Identifier: (n, _s, ancestors) => {
      const node = n as unknown as AnyNode;
      const parent = ancestors[ancestors.length - 2] as AnyNode | undefined;
      if (!isReference(node, parent)) return;
      const name = node.name as string;
      if (name === "__proto__") return refuse("no-proto", n);
      if (declared.has(name) && !(name in NAMED_REFUSALS)) return;
      if (NAMED_REFUSALS[name]) return refuse(NAMED_REFUSALS[name] as GateRule, n, name);
      if (!ALLOWED_GLOBALS.has(name) && !declared.has(name)) refuse("unknown-global", n, name);
    },
    MemberExpression: (n) => {
      const node = n as unknown as AnyNode;
      const name = propName(node);
      const object = node.object as AnyNode;
      if (name === "constructor") refuse("no-constructor", n);
      if (name === "__proto__") refuse("no-proto", n);
      if (name === "callee" || name === "caller") refuse("no-callee", n, name);
      if (name && PROTO_CALLS.has(name))
        refuse(name.includes("Getter") || name.includes("Setter") ? "no-getter-on-global" : "no-proto", n, name);
      if (node.computed && name === undefined) {
        const root = rootName(object);
        if (root && (COMPUTED_ROOTS.has(root) || root === "this")) refuse("no-computed-on-root", n, `${root}[…]`);
        const objName = object.type === "MemberExpression" ? propName(object) : undefined;
        if (objName === "prototype") refuse("no-computed-on-root", n, "….prototype[…]");
      }
      if (name === "defineProperty" || name === "defineProperties") {
        // Checked at the call: accessors on the global object.
      }
    },
    AssignmentExpression: (n) => {
      const left = (n as unknown as AnyNode).left as AnyNode;
      if (left.type === "MemberExpression") {
        const name = propName(left);
        if (name === "prototype" || name === "__proto__") refuse("no-proto", n, `assignment to .${name}`);
        const inner = left.object as AnyNode;
        if (inner.type === "MemberExpression" && propName(inner) === "prototype")
          refuse("no-proto", n, "assignment into a prototype");
        const root = rootName(inner);
        if (root === "this" || root === "globalThis") refuse("no-getter-on-global", n, "writes to the global object");
      }
    },
    CallExpression: (n) => {
      const callee = (n as unknown as AnyNode).callee as AnyNode;
      const args = (n as unknown as AnyNode).arguments as AnyNode[];
      if (callee.type === "MemberExpression") {
        const name = propName(callee);
        const target = args[0];
        if (
          (name === "defineProperty" || name === "defineProperties") &&
          target &&
          (target.type === "ThisExpression" || (target.type === "Identifier" && target.name === "globalThis"))
        ) {
          refuse("no-getter-on-global", n, name);
        }
        if (
          (name === "defineProperty" || name === "defineProperties" || name === "assign") &&
          target?.type === "MemberExpression" &&
          propName(target) === "prototype"
        ) {
          refuse("no-proto", n, `${name} on a prototype`);
        }
      }
    },
    NewExpression: (n) => {
      const callee = (n as unknown as AnyNode).callee as AnyNode;
      if (callee.type === "Identifier" && callee.name === "Function") refuse("no-eval", n, "new Function");
    },
  };
  ancestor(ast, visitors, { ...base });

  const topLevel = new Set(
    ((ast as unknown as AnyNode).body as AnyNode[]).flatMap((s) => {
      if (s.type === "FunctionDeclaration") return [((s.id as AnyNode)?.name as string) ?? ""];
      if (s.type === "VariableDeclaration")
        return (s.declarations as AnyNode[]).map((d) => ((d.id as AnyNode).name as string) ?? "");
      return [];
    }),
  );
  if (kind === "tool" && !topLevel.has(TOOL_ENTRY)) refuse("missing-entry", undefined, "no top-level function run(ctx, args)");
  if (kind === "middleware" && !MIDDLEWARE_HOOKS.some((h) => topLevel.has(h)))
    refuse("missing-entry", undefined, `no top-level ${MIDDLEWARE_HOOKS.join(", ")}`);
  refusals.sort((a, b) => a.line - b.line || a.column - b.column);
  return refusals;
}

/** Top-level function names a module defines (after it passed the gate). */
export function topLevelFunctions(source: string): string[] {
  const ast = parse(source, { ecmaVersion: 2024, sourceType: "script" }) as unknown as AnyNode;
  return (ast.body as AnyNode[]).flatMap((s) => {
    if (s.type === "FunctionDeclaration") return [(s.id as AnyNode).name as string];
    if (s.type === "VariableDeclaration")
      return (s.declarations as AnyNode[])
        .filter((d) => (d.id as AnyNode).type === "Identifier")
        .map((d) => (d.id as AnyNode).name as string);
    return [];
  });
}

export function formatRefusal(file: string, r: Refusal): string {
  return `${file}:${r.line}:${r.column}: [${r.rule}] ${r.message}`;
}
