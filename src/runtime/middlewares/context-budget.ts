import type { ContextBudgetParams } from "../../harness/middleware-params.ts";
import type { Middleware } from "../middleware.ts";

/**
 * hone:context_budget: keeps the conversation inside the model's window by summarising or truncating old tool
 * outputs and, if that is not enough, dropping old turns (context-fit.ts). It has no hooks: the agent loop reads its
 * parameters and compacts before a call that would pass the limit (context-keeper.ts). A harness without it still
 * compacts once, with the default parameters, when the server refuses a prompt as too long.
 */
export function contextBudget(params: ContextBudgetParams): Middleware {
  return { name: "context_budget", contextBudget: params };
}
