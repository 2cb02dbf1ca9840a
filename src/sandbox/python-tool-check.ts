import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { ToolSpec } from "../harness/types.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { NO_FALLBACK } from "../task/evaluation.ts";
import { PYTHON_DIR } from "../task/python-env.ts";
import type { PythonGateProblem } from "../task/python-tool-gate.ts";
import { type CtxHandler, coldToolChannel, runPythonTool } from "../task/tool-channel.ts";
import { defaultLimits, type SandboxLimits } from "./isolate.ts";
import { pythonCallLimits } from "./python-tool-host.ts";

// Before a package with Python tools is accepted: the static gate on each tool's source (hone_tool_gate.py, the
// same gate as checkPythonTool, called synchronously so the package loader can use it), then HarnessTTT's self-test:
// run(ctx, args) once with {}, once with a value for every property of the schema, and once more for each further
// enum value, against a ctx of canned answers (HarnessTTT's MockContext), contained like any tool call.

/** The gate's verdict on one Python tool's source ([] means accepted); a gate that cannot run is a refusal too. */
export function pythonGate(code: string, name: string, python = "python3"): PythonGateProblem[] {
  try {
    const out = execFileSync(python, [join(PYTHON_DIR, "hone_tool_gate.py")], {
      input: JSON.stringify({ code, name }),
      encoding: "utf8",
      timeout: 20_000,
      maxBuffer: 1 << 20,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    return JSON.parse(out) as PythonGateProblem[];
  } catch (err) {
    const why = (err as Error).message.split("\n")[0];
    return [
      { line: 1, col: 1, rule: "gate", message: `the Python tool gate could not run (${python}): ${why}; install python3` },
    ];
  }
}

type Schema = Record<string, unknown>;
const MAX_CASES = 12;

/** A value for one property, by HarnessTTT's self-test rules (default, first enum value, then by type). */
function caseValue(s: Schema, depth = 0): unknown {
  if ("default" in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const num = (v: unknown, fallback: number) => (typeof v === "number" ? v : fallback);
  switch (s.type) {
    case "integer":
      return Math.max(Math.trunc(num(s.minimum, 2)), 1);
    case "number":
      return Math.max(num(s.minimum, 1.0), 0.5);
    case "boolean":
      return true;
    case "string":
      return "sample";
    case "array": {
      const item = depth < 4 && s.items && typeof s.items === "object" ? caseValue(s.items as Schema, depth + 1) : 1.0;
      return Array.from({ length: Math.min(16, Math.max(Math.trunc(num(s.minItems, 2)), 2)) }, () => item);
    }
    default:
      return s.type === "object" || (s.properties && typeof s.properties === "object") ? caseObject(s, depth + 1) : null;
  }
}

function caseObject(s: Schema, depth: number): Record<string, unknown> {
  if (depth > 4) return {};
  const props = (s.properties && typeof s.properties === "object" ? s.properties : {}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(props)
      .filter(([, p]) => p && typeof p === "object")
      .map(([k, p]) => [k, caseValue(p as Schema, depth)]),
  );
}

/** HarnessTTT's self-test arguments: {}, a base case from the schema, and one case per further enum value. */
export function pythonSelfTestCases(schema: Schema): Record<string, unknown>[] {
  const cases: Record<string, unknown>[] = [{}];
  const props = schema.properties && typeof schema.properties === "object" ? (schema.properties as Record<string, Schema>) : {};
  if (schema.type === "object" && Object.keys(props).length > 0) {
    const base = caseObject(schema, 0);
    cases.push(base);
    for (const [k, p] of Object.entries(props))
      if (p && Array.isArray(p.enum)) for (const v of p.enum.slice(1)) cases.push({ ...base, [k]: v });
  }
  const seen = new Set<string>();
  return cases.filter((c) => !seen.has(JSON.stringify(c)) && seen.add(JSON.stringify(c))).slice(0, MAX_CASES);
}

const MOCK_PROGRAM = "# EVOLVE-BLOCK-START\npass\n# EVOLVE-BLOCK-END";

/** HarnessTTT's MockContext: canned answers, nothing evaluated, scratch of its own for each case. */
export function mockCtx(program = MOCK_PROGRAM): CtxHandler {
  const scratch = new Map<string, string>();
  const result = { combined_score: 0.5, validity: 1.0, error: null };
  const answers: Record<string, (args: unknown[]) => unknown> = {
    get_program: () => program,
    get_best_program: () => program,
    best_score: () => 0.5,
    stage_edit: () => "edit staged",
    probe: () => result,
    evaluate: () => result,
    budget_left: () => ({ evaluations: 10, probes: 10 }),
    list_task_inputs: () => ["input.csv"],
    read_input_sample: () => "a,b\n1,2\n3,4\n",
    scratch_write: ([name, text]) => {
      scratch.set(String(name), String(text));
      return `scratch/${String(name)}`;
    },
    scratch_read: ([name]) => scratch.get(String(name)) ?? "ERROR: no such file",
    log: () => null,
  };
  return async (method, args) => {
    const fn = Object.hasOwn(answers, method) ? answers[method] : undefined;
    if (!fn) throw new Error(`ctx has no method ${method}`);
    return fn(args);
  };
}

/** A stand-in task for self-tests without --task: nothing to read, the package folder hidden from the tool. */
export function selfTestTask(dir: string, python = "python3"): DiscoveryTask {
  return {
    kind: "discovery",
    id: "self-test",
    dir,
    description: "self-test",
    seedProgram: MOCK_PROGRAM,
    seedPath: join(dir, "initial_program.py"),
    programExtension: ".py",
    evaluatorPath: join(dir, "evaluator.py"),
    metric: "combined_score",
    direction: "maximize",
    budget: { maxEvals: 10 },
    timeoutSec: 30,
    memoryMb: 1024,
    python,
    pythonPath: [],
    env: {},
    cascade: { enabled: false, thresholds: [] },
    programPreload: [],
    maxProcesses: 64,
    evaluatorState: "fresh",
    secrets: [],
    layout: "openevolve",
    metricFallback: NO_FALLBACK,
  };
}

/** Runs HarnessTTT's self-test cases of one Python tool; each failure is a problem naming the arguments. */
export async function selfTestPythonTool(
  t: ToolSpec,
  o: { task: DiscoveryTask; program?: string; limits?: SandboxLimits },
): Promise<{ file: string; message: string }[]> {
  const channel = coldToolChannel(o.task);
  for (const args of pythonSelfTestCases(t.inputSchema)) {
    const r = await runPythonTool(
      channel,
      { code: t.source ?? "", args, ...pythonCallLimits(o.limits ?? defaultLimits) },
      mockCtx(o.program),
    );
    if (!r.ok) return [{ file: t.file, message: `self-test: run(ctx, ${JSON.stringify(args)}) failed (${r.kind}): ${r.error}` }];
  }
  return [];
}
