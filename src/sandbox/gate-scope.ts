import { createRequire } from "node:module";
import type { Node } from "acorn";
import type { Variable } from "eslint-scope";
import type * as ESTree from "estree";
import { ISOLATE_GLOBALS, TOOL_ENTRY } from "./gate-rules.ts";

// Loaded by the first gate, not with hone (see gate.ts).
const load = createRequire(import.meta.url);
let scope: typeof import("eslint-scope") | undefined;
let keys: typeof import("eslint-visitor-keys") | undefined;

/**
 * What a real scope analysis (eslint-scope, over acorn's ESTree) says about a module's names: which identifiers
 * resolve to no declaration at all (so they name the global object's properties), and which ones name ctx. A
 * parameter, catch clause, destructured or hoisted var, let/const, class or function name only ever hides a name
 * inside its own scope, so `function unused(globalThis, Date) {}` leaves every other use of those names free.
 */
export interface ScopeFacts {
  /** Identifiers that resolve to no declaration. */
  free: ReadonlySet<Node>;
  /** Identifiers that reference ctx: the first parameter of the top-level run, or any binding named `ctx`. */
  ctx: ReadonlySet<Node>;
  /** Top-level `var` declarations named after a global of the isolate (such a var starts with the global's value). */
  globalVars: readonly Node[];
}

type AnyNode = Node & Record<string, unknown>;

/** The function bound to `run` at the top level (a declaration, or a const/let/var initialised with a function). */
function entryFunction(ast: AnyNode): AnyNode | undefined {
  for (const s of ast.body as AnyNode[]) {
    if (s.type === "FunctionDeclaration" && (s.id as AnyNode | null)?.name === TOOL_ENTRY) return s;
    if (s.type !== "VariableDeclaration") continue;
    for (const d of s.declarations as AnyNode[]) {
      const init = d.init as AnyNode | null;
      const isFn = init?.type === "FunctionExpression" || init?.type === "ArrowFunctionExpression";
      if ((d.id as AnyNode).type === "Identifier" && (d.id as AnyNode).name === TOOL_ENTRY && isFn) return init ?? undefined;
    }
  }
  return undefined;
}

function firstParamIdentifier(fn: AnyNode | undefined): AnyNode | undefined {
  let p = (fn?.params as AnyNode[] | undefined)?.[0];
  if (p?.type === "AssignmentPattern") p = p.left as AnyNode;
  return p?.type === "Identifier" ? p : undefined;
}

export function scopeFacts(ast: Node): ScopeFacts {
  scope ??= load("eslint-scope") as typeof import("eslint-scope");
  keys ??= load("eslint-visitor-keys") as typeof import("eslint-visitor-keys");
  const manager = scope.analyze(ast as unknown as ESTree.Program, {
    ecmaVersion: 2024,
    sourceType: "script",
    childVisitorKeys: keys.KEYS,
  });
  const global = manager.globalScope;
  const free = new Set<Node>((global?.through ?? []).map((r) => r.identifier as unknown as Node));

  const ctxParam = firstParamIdentifier(entryFunction(ast as AnyNode));
  const isCtx = (v: Variable) =>
    v.name === "ctx" || (ctxParam !== undefined && v.identifiers.some((id) => (id as unknown) === ctxParam));
  const ctx = new Set<Node>();
  for (const scope of manager.scopes)
    for (const v of scope.variables) if (isCtx(v)) for (const r of v.references) ctx.add(r.identifier as unknown as Node);

  const globalVars = (global?.variables ?? [])
    .filter((v) => ISOLATE_GLOBALS.has(v.name) && v.defs.some((d) => d.type === "Variable" && d.parent.kind === "var"))
    .map((v) => v.identifiers[0] as unknown as Node);
  return { free, ctx, globalVars };
}
