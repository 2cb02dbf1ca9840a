import type { ChatMessage } from "../model/types.ts";
import type { LoopView, Middleware, ToolCallView } from "../runtime/middleware.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import type { SandboxModule } from "./isolate.ts";
import { type HookName, middlewareResultShapes } from "./shapes.ts";

const MESSAGES_SHOWN = 30;
const CONTENT_SHOWN = 4000;

/** The copy of the loop a generated middleware sees: recent messages (bounded), the budget, its params. */
export function middlewareView(view: LoopView, params: Record<string, unknown>) {
  const messages = view.messages.slice(-MESSAGES_SHOWN).map((m: ChatMessage) => ({
    role: m.role,
    content: typeof m.content === "string" ? m.content.slice(0, CONTENT_SHOWN) : null,
    ...(m.role === "assistant" && m.tool_calls
      ? {
          tool_calls: m.tool_calls.map((c) => ({
            name: c.function.name,
            arguments: c.function.arguments.slice(0, CONTENT_SHOWN),
          })),
        }
      : {}),
  }));
  return { iteration: view.iteration, budget: view.budget, messages, params };
}

export type HookOutcome = { ok: true; value: Record<string, unknown> | null } | { ok: false; error: string };

/** Calls one hook and checks its result against the declared shape. */
export async function callHook(
  module: SandboxModule,
  hook: HookName,
  args: unknown[],
  signal?: AbortSignal,
): Promise<HookOutcome> {
  const r = await module.call(hook, args, signal);
  if (!r.ok) return { ok: false, error: `${r.kind}: ${r.error}` };
  const parsed = middlewareResultShapes[hook].safeParse(r.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${hook} returned the wrong shape at ${issue?.path.join(".") || "(top)"}: ${issue?.message}` };
  }
  return { ok: true, value: parsed.data as Record<string, unknown> | null };
}

/** A generated middleware as a Middleware: a failing hook is recorded and has no effect; the rollout goes on. */
export function sandboxedMiddleware(
  name: string,
  module: SandboxModule,
  hooks: readonly HookName[],
  params: Record<string, unknown>,
  trajectory: TrajectorySink,
): Middleware {
  const run = async (hook: HookName, args: unknown[], signal: AbortSignal | undefined) => {
    const r = await callHook(module, hook, args, signal);
    if (!r.ok) {
      trajectory.write({ type: "middleware_error", middleware: name, hook, error: r.error });
      return null;
    }
    return r.value;
  };
  const m: Middleware = { name };
  if (hooks.includes("beforeModel")) {
    m.beforeModel = async (view) => {
      const v = await run("beforeModel", [middlewareView(view, params)], view.signal);
      return v ? { append: v.append as ChatMessage[] | undefined, note: v.note as string | undefined } : undefined;
    };
  }
  if (hooks.includes("afterModel")) {
    m.afterModel = async (view, response) => {
      const v = await run(
        "afterModel",
        [
          middlewareView(view, params),
          {
            content: response.message.content,
            tool_calls: response.message.tool_calls.map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
          },
        ],
        view.signal,
      );
      return v ? { note: v.note as string | undefined } : undefined;
    };
  }
  if (hooks.includes("beforeTool")) {
    m.beforeTool = async (view, call: ToolCallView) => {
      const v = await run("beforeTool", [middlewareView(view, params), { name: call.name, args: call.args }], view.signal);
      return v ? { note: v.note as string | undefined } : undefined;
    };
  }
  if (hooks.includes("afterTool")) {
    m.afterTool = async (view, call, output) => {
      const v = await run("afterTool", [middlewareView(view, params), { name: call.name, args: call.args }, output], view.signal);
      return v ? { output: v.output as string | undefined, note: v.note as string | undefined } : undefined;
    };
  }
  return m;
}
