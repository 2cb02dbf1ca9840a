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
  default?: unknown;
  const?: unknown;
};

/** A plausible argument value for a JSON schema: defaults, consts and enums first, then a value of the type. */
export function sampleFromSchema(schema: Schema, depth = 0): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return "sample";
    case "integer":
      return Math.max(1, Math.ceil(schema.minimum ?? 1));
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return depth < 4 && schema.items ? [sampleFromSchema(schema.items, depth + 1)] : [];
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
      if (edit && typeof edit.block === "string")
        current = current.replace(/(# EVOLVE-BLOCK-START\n)[\s\S]*?(# EVOLVE-BLOCK-END)/, `$1${edit.block}\n$2`);
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
