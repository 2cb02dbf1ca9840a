import type { MiddlewareConfig, ToolSpec } from "../harness/types.ts";
import type { DiscoveryEnvironment } from "../runtime/discovery-env.ts";
import type { ToolOutcome } from "../runtime/environment.ts";
import type { Middleware } from "../runtime/middleware.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { topLevelFunctions } from "./gate.ts";
import { defaultLimits, type SandboxLimits, SandboxModule } from "./isolate.ts";
import { sandboxedMiddleware } from "./middleware-host.ts";
import { type PythonRollout, pythonTools } from "./python-tool-host.ts";
import { type HookName, middlewareResultShapes } from "./shapes.ts";
import { discoveryToolHost, type TaskInputs } from "./tool-host.ts";

export interface GeneratedCodeHost {
  tools: Map<string, (args: Record<string, unknown>, signal?: AbortSignal) => Promise<ToolOutcome>>;
  middleware(config: MiddlewareConfig): Middleware;
  dispose(): void;
}

export function hooksOf(source: string): HookName[] {
  const defined = new Set(topLevelFunctions(source));
  return (Object.keys(middlewareResultShapes) as HookName[]).filter((h) => defined.has(h));
}

/** Turns a tool's result into what the executor reads: strings as they are, anything else as JSON. */
export function toolOutput(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The generated code of one rollout: each custom tool and middleware in its own isolate, created here and disposed
 * when the rollout ends. A throw, timeout or out-of-memory becomes a tool error the executor sees.
 */
export function generatedCodeHost(
  tools: readonly ToolSpec[],
  env: DiscoveryEnvironment,
  task: TaskInputs,
  trajectory: TrajectorySink,
  opts: { seed: number; limits?: SandboxLimits; maxProbes?: number; python?: PythonRollout },
): GeneratedCodeHost {
  const limits = opts.limits ?? defaultLimits;
  const modules: SandboxModule[] = [];
  const maxProbes = opts.maxProbes ?? Math.max(4, env.total * 2);
  const host = discoveryToolHost(env, task, trajectory, maxProbes);
  // Python tools (custom_tools/<name>.py) run in the program sandbox: python-tool-host.ts.
  const toolMap: GeneratedCodeHost["tools"] = pythonTools(tools, { env, trajectory, limits, maxProbes, python: opts.python });
  for (const t of tools) {
    if (t.kind !== "custom" || !t.source || t.language === "python") continue;
    const module = new SandboxModule(t.source, `custom_tools/${t.name}.js`, limits, host, opts.seed);
    modules.push(module);
    toolMap.set(t.name, async (args, signal) => {
      const r = await module.call("run", [args], signal);
      if (r.ok) return { output: toolOutput(r.value) };
      trajectory.write({ type: "sandbox_failure", tool: t.name, kind: r.kind, error: r.error });
      return { output: `Error: the tool ${t.name} failed (${r.kind}): ${r.error}`, error: true };
    });
  }
  return {
    tools: toolMap,
    middleware(config) {
      const module = new SandboxModule(config.source ?? "", `middlewares/${config.name}.js`, limits, undefined, opts.seed);
      modules.push(module);
      return sandboxedMiddleware(config.name, module, hooksOf(config.source ?? ""), config.params, trajectory);
    },
    dispose() {
      for (const m of modules) m.dispose();
    },
  };
}
