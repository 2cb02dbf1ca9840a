import type { BuiltinMiddlewareName, ContextBudgetParams } from "../../harness/middleware-params.ts";
import type { Middleware } from "../middleware.ts";
import { budgetReminder } from "./budget-reminder.ts";
import { contextBudget } from "./context-budget.ts";
import { longToolOutput } from "./long-tool-output.ts";
import { type StallHost, stallRestart } from "./stall-restart.ts";

export type MiddlewareHost = StallHost;

type Factory = (params: Record<string, unknown>, host: MiddlewareHost) => Middleware;

/** hone's built-in middlewares by the name after `hone:`; params were validated when the package loaded. */
export const builtinMiddlewares: Record<BuiltinMiddlewareName, Factory> = {
  budget_reminder: (p) => budgetReminder(p as Parameters<typeof budgetReminder>[0]),
  stall_restart: (p, host) => stallRestart(p as Parameters<typeof stallRestart>[0], host),
  long_tool_output: (p) => longToolOutput(p as Parameters<typeof longToolOutput>[0]),
  context_budget: (p) => contextBudget(p as ContextBudgetParams),
};
