import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/fixtures.ts";

const TAU_DIR = join(ROOT, "src", "task", "qa", "tau");

// τ-bench's `calculate` (envs/*/tools/calculate.py) checks the characters against a str, then evals the expression
// with no builtins; `reference` below is that rule. hone's port must give the same observation for every expression
// an agent can send (small enough that eval finishes), including calls such as `2(3)`, starred arguments, and
// arguments that are not text at all.
const PROBE = `
import json, sys, warnings
sys.path.insert(0, sys.argv[1])
from tau_common import calculate
warnings.simplefilter("ignore")
def reference(expression):
    if not all(char in "0123456789+-*/(). " for char in expression):
        return "Error: invalid characters in expression"
    try:
        return str(round(float(eval(expression, {"__builtins__": None}, {})), 2))
    except Exception as e:
        return f"Error: {e}"
def observe(f, e):
    try:
        return f(e)
    except Exception as exc:  # raised out of the tool: τ-bench's Env.step reports it as "Error: ..."
        return f"Error: {exc}"
out = []
for e in json.loads(sys.stdin.read()):
    out.append([e, observe(reference, e), observe(calculate, e)])
print(json.dumps(out))
`;

const expressions: unknown[] = [
  "2(3)",
  "(1)(2)",
  "()()",
  "(1)(*2)",
  "(1)(**2)",
  "(1)(1/0)",
  "(*2)",
  "2 * (3 + 4) / 7",
  "(2)**(3)**(2)",
  "2.675",
  "10**400",
  "-()",
  "...",
  [1],
  ["1"],
  {},
  5,
  null,
];

describe("τ-bench's calculate, as its tool computes it", () => {
  it("gives τ-bench's observation for calls, starred arguments and arguments that are not text", () => {
    const rows = JSON.parse(
      execFileSync("python3", ["-c", PROBE, TAU_DIR], { input: JSON.stringify(expressions), encoding: "utf8" }),
    ) as [unknown, string, string][];
    expect(rows).toHaveLength(expressions.length);
    for (const [e, reference, hone] of rows) expect(hone, JSON.stringify(e)).toBe(reference);
    expect(rows[0]?.[1]).toBe("Error: 'int' object is not callable");
  });

  it("still refuses a power too large to work out, quickly", () => {
    const code = `import sys\nsys.path.insert(0, sys.argv[1])\nfrom tau_common import calculate\nprint(calculate("9**9**9**9"))`;
    expect(execFileSync("python3", ["-c", code, TAU_DIR], { encoding: "utf8", timeout: 10_000 }).trim()).toMatch(/^Error: /);
  });
});
