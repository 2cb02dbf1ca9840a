import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";

/**
 * Which of the entry points hone's runner calls (`evaluate`, and `evaluate_stage1` for a cascade) an evaluator binds
 * at module level, decided as Python would bind them, without running it: a `def` or `async def`, an import that binds
 * the name (`from shared_eval import evaluate`, as SkyDiscover's gpu_mode evaluators do, or `import x as evaluate`),
 * an assignment, a class, in the module's body or in its module-level `if`/`try`/`with`/`for` blocks (never a
 * function's or a class's body). A `from m import *` may bind any name, and so may `globals()[...] =`, `setattr`,
 * `exec`, a walrus or a `match` capture: each counts as binding both, and the runner
 * says so when it loads the evaluator if it did not. The common case (a `def` at the start of a line) is read from
 * the text; anything else is parsed with Python's own `ast` (parsed, never executed).
 */
export interface EvaluatorEntries {
  evaluate: boolean;
  stage1: boolean;
  /** Why the source could not be read as Python (a syntax error), when it could not. */
  syntaxError?: string;
}

const NAMES = { evaluate: "evaluate", stage1: "evaluate_stage1" } as const;
type Entry = keyof typeof NAMES;

const defined = (source: string, name: string) => new RegExp(`^(?:async\\s+)?def\\s+${name}\\s*\\(`, "m").test(source);
const mentioned = (source: string, name: string) => new RegExp(`\\b${name}\\b`).test(source);
const starImport = (source: string) => /\bimport\s+\*/.test(source);

const BOUND = `
import ast, json, sys
try:
    tree = ast.parse(sys.stdin.read())
except (SyntaxError, ValueError) as e:
    print(json.dumps({"error": "line %s: %s" % (getattr(e, "lineno", "?"), getattr(e, "msg", e))}))
    sys.exit(0)
bound, star = set(), False
def target(t):
    if isinstance(t, ast.Name):
        bound.add(t.id)
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            target(e)
    elif isinstance(t, ast.Starred):
        target(t.value)
def walk(body):
    global star
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
            continue
        if isinstance(n, ast.Import):
            bound.update(a.asname or a.name.split(".")[0] for a in n.names)
        elif isinstance(n, ast.ImportFrom):
            star = star or any(a.name == "*" for a in n.names)
            bound.update(a.asname or a.name for a in n.names if a.name != "*")
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                target(t)
        elif isinstance(n, ast.AnnAssign) and n.value is not None:
            target(n.target)
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            target(n.target)
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            for item in n.items:
                if item.optional_vars is not None:
                    target(item.optional_vars)
        for field in ("body", "orelse", "finalbody"):
            walk(getattr(n, field, None) or [])
        for h in getattr(n, "handlers", None) or []:
            walk(h.body)
        for c in getattr(n, "cases", None) or []:
            walk(c.body)
walk(tree.body)
# What binds names as it runs rather than as it reads (globals()[...] =, setattr on the module, a walrus or a match
# capture): counted as a star import, may bind anything; the runner says so at load if it did not.
for n in ast.walk(tree):
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("globals", "setattr", "exec"):
        star = True
    elif isinstance(n, (ast.NamedExpr, ast.MatchAs, ast.MatchStar)):
        star = True
print(json.dumps({"bound": sorted(bound), "star": star}))
`;

/** The names Python binds at module level in `source`, parsed by `python`; undefined when it could not be run. */
function parsedBindings(source: string, python: string): { bound: string[]; star: boolean; error?: string } | undefined {
  try {
    const out = execFileSync(python, ["-I", "-c", BOUND], {
      input: source,
      encoding: "utf8",
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      timeout: 20_000,
      maxBuffer: 16 << 20,
      stdio: ["pipe", "pipe", "ignore"],
    });
    return JSON.parse(out);
  } catch {
    return undefined;
  }
}

/** Which entry points `source` binds; `python` parses it when its text alone does not say. */
export function evaluatorEntries(source: string, python: string): EvaluatorEntries {
  const found = { evaluate: defined(source, NAMES.evaluate), stage1: defined(source, NAMES.stage1) };
  const open = (Object.keys(NAMES) as Entry[]).filter((k) => !found[k] && (mentioned(source, NAMES[k]) || starImport(source)));
  if (open.length === 0) return found;
  const parsed = parsedBindings(source, python);
  // An interpreter that could not be run decides nothing here: the runner checks again when it loads the evaluator.
  if (!parsed) return { ...found, ...Object.fromEntries(open.map((k) => [k, true])) };
  if (parsed.error) return { ...found, syntaxError: parsed.error };
  for (const k of open) found[k] = parsed.star || parsed.bound.includes(NAMES[k]);
  return found;
}
