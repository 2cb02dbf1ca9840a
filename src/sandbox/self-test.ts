import { dirname } from "node:path";
import type { MiddlewareConfig, ToolSpec } from "../harness/types.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";
import { hooksOf, toolOutput } from "./generated-code.ts";
import { defaultLimits, type SandboxLimits, SandboxModule, type ToolHost } from "./isolate.ts";
import { callHook, middlewareView } from "./middleware-host.ts";
import { selfTestPythonTool, selfTestTask } from "./python-tool-check.ts";

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  items?: Schema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  default?: unknown;
  const?: unknown;
};

const finite = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/** The tighter of a schema's inclusive and exclusive bound on one side (draft-07: both are numbers). */
function bound(inclusive: unknown, exclusive: unknown, tighter: (a: number, b: number) => number) {
  if (finite(exclusive) && (!finite(inclusive) || tighter(inclusive, exclusive) === exclusive))
    return { value: exclusive, open: true };
  return finite(inclusive) ? { value: inclusive, open: false } : undefined;
}

/** A number inside the schema's bounds: its minimum (an integer: at least 1 where allowed), else 1, below its maximum. */
function sampleNumber(schema: Schema, integer: boolean): number {
  const lo = bound(schema.minimum, schema.exclusiveMinimum, Math.max);
  const hi = bound(schema.maximum, schema.exclusiveMaximum, Math.min);
  if (integer) {
    const least = lo === undefined ? Number.NEGATIVE_INFINITY : lo.open ? Math.floor(lo.value) + 1 : Math.ceil(lo.value);
    const most = hi === undefined ? Number.POSITIVE_INFINITY : hi.open ? Math.ceil(hi.value) - 1 : Math.floor(hi.value);
    return Math.min(Math.max(1, least), most);
  }
  const v = lo === undefined ? 1 : lo.open ? lo.value + 1 : lo.value;
  if (hi === undefined || v < hi.value || (v === hi.value && !hi.open)) return v;
  if (!hi.open) return hi.value;
  return lo === undefined ? hi.value - 1 : (lo.value + hi.value) / 2;
}

/** A plausible argument value for a JSON schema: defaults, consts and enums first, then a value of the type. */
export function sampleFromSchema(schema: Schema, depth = 0): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  if (depth > 8) return null;
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (branch && schema.type === undefined && schema.properties === undefined) return sampleFromSchema(branch, depth + 1);
  if (schema.allOf?.length && schema.type === undefined)
    return sampleFromSchema(Object.assign({}, ...schema.allOf) as Schema, depth + 1);
  // A nullable type (["string", "null"]) is sampled as its other type: the tool is most likely to handle that one.
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((t) => t !== "null") ?? types[0];
  switch (type) {
    case "string": {
      // "sample", cut to maxLength or padded to minLength. `pattern` and `format` are not honoured.
      const min = finite(schema.minLength) ? Math.min(schema.minLength, 10_000) : 0;
      const max = finite(schema.maxLength) ? Math.max(0, schema.maxLength) : Number.POSITIVE_INFINITY;
      return "sample".slice(0, max).padEnd(min, "x");
    }
    case "integer":
      return sampleNumber(schema, true);
    case "number":
      return sampleNumber(schema, false);
    case "boolean":
      return true;
    case "array": {
      if (depth >= 4 || !schema.items) return [];
      const least = finite(schema.minItems) ? Math.max(1, Math.min(schema.minItems, 100)) : 1;
      const n = finite(schema.maxItems) ? Math.min(least, Math.max(0, schema.maxItems)) : least;
      return Array.from({ length: n }, () => sampleFromSchema(schema.items as Schema, depth + 1));
    }
    case "null":
      return null;
    default: {
      const out: Record<string, unknown> = {};
      if (depth > 4) return out;
      for (const key of schema.required ?? []) out[key] = sampleFromSchema(schema.properties?.[key] ?? {}, depth + 1);
      return out;
    }
  }
}

const SAMPLE_PROGRAM = "import math\n\n# EVOLVE-BLOCK-START\ndef solve():\n    return 1.0\n# EVOLVE-BLOCK-END\n";

/** A ctx for self-tests: a sample program, and canned answers for probe and evaluate (no evaluator runs). */
export function selfTestHost(program = SAMPLE_PROGRAM): ToolHost {
  let current = program;
  return {
    taskJson: JSON.stringify({
      id: "self-test",
      description: "self-test",
      metric: "combined_score",
      direction: "maximize",
      reference: null,
      budget: { total: 10 },
    }),
    program: () => current,
    stage: (json: string) => {
      const edit = JSON.parse(json) as { block?: unknown } | null;
      const block = edit?.block;
      // A function replacement: `$&` or `$'` in the block are the block's own text, not replacement patterns.
      if (typeof block === "string")
        current = current.replace(
          /(# EVOLVE-BLOCK-START\n)[\s\S]*?(# EVOLVE-BLOCK-END)/,
          (_m, start, end) => `${start}${block}\n${end}`,
        );
      return JSON.stringify({ ok: true });
    },
    probe: async () => JSON.stringify({ valid: true, reason: null }),
    evaluate: async () =>
      JSON.stringify({
        valid: true,
        score: 1,
        metric: "combined_score",
        direction: "maximize",
        improved: false,
        best_score: 1,
        evaluations_used: 1,
        evaluations_left: 9,
        self_test: true,
      }),
  };
}

export interface SelfTestProblem {
  file: string;
  message: string;
}

/** Calls each generated tool once with arguments from its schema and each middleware hook once with a sample view. */
export async function selfTest(
  tools: readonly ToolSpec[],
  middlewares: readonly MiddlewareConfig[],
  opts: { program?: string; limits?: SandboxLimits; task?: DiscoveryTask } = {},
): Promise<SelfTestProblem[]> {
  const limits = opts.limits ?? defaultLimits;
  const problems: SelfTestProblem[] = [];
  for (const t of tools) {
    if (t.kind !== "custom" || !t.source) continue;
    if (t.language === "python") {
      const task = opts.task ?? selfTestTask(dirname(dirname(t.file)));
      problems.push(...(await selfTestPythonTool(t, { task, program: opts.program, limits })));
      continue;
    }
    const module = new SandboxModule(t.source, `custom_tools/${t.name}.js`, limits, selfTestHost(opts.program));
    try {
      const args = sampleFromSchema(t.inputSchema as Schema);
      const r = await module.call("run", [args]);
      if (!r.ok)
        problems.push({ file: t.file, message: `self-test: run(ctx, ${JSON.stringify(args)}) failed (${r.kind}): ${r.error}` });
      else if (toolOutput(r.value).length === 0)
        problems.push({
          file: t.file,
          message: "self-test: run() returned nothing; a tool must return a result for the executor",
        });
    } finally {
      module.dispose();
    }
  }
  for (const m of middlewares) {
    if (m.kind !== "custom" || !m.source) continue;
    const module = new SandboxModule(m.source, `middlewares/${m.name}.js`, limits);
    try {
      const view = middlewareView(
        {
          iteration: 2,
          budget: { used: 3, left: 2, total: 5 },
          messages: [
            { role: "system", content: "sample system prompt" },
            { role: "user", content: "sample task" },
          ],
        },
        m.params,
      );
      const call = { name: "evaluate_program", args: {} };
      const argsFor: Record<string, unknown[]> = {
        beforeModel: [view],
        afterModel: [view, { content: null, tool_calls: [{ name: "evaluate_program", arguments: "{}" }] }],
        beforeTool: [view, call],
        afterTool: [view, call, JSON.stringify({ valid: true, score: 1, evaluations_left: 2 })],
      };
      for (const hook of hooksOf(m.source)) {
        const r = await callHook(module, hook, argsFor[hook] ?? [view]);
        if (!r.ok) problems.push({ file: m.file ?? m.name, message: `self-test: ${hook} failed: ${r.error}` });
      }
    } finally {
      module.dispose();
    }
  }
  return problems;
}
