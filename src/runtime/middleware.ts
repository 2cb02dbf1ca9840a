import type { ContextBudgetParams } from "../harness/middleware-params.ts";
import type { ChatMessage, ChatResponse } from "../model/types.ts";

/** What a middleware can read about the rollout. Views are copies: a hook changes things only by what it returns. */
export interface LoopView {
  iteration: number;
  messages: readonly ChatMessage[];
  budget: { used: number; left: number; total: number };
  /**
   * Aborted at the rollout's deadline: hooks still to run are skipped, and a sandboxed hook running then is stopped.
   * Never part of what generated middleware sees (sandbox/middleware-host.ts copies the view field by field).
   */
  signal?: AbortSignal;
}

export interface ToolCallView {
  name: string;
  args: Record<string, unknown>;
}

/** Returned by hooks; every field optional. `note` goes to the trajectory to show the intervention. */
export interface BeforeModelResult {
  append?: ChatMessage[];
  note?: string;
}
export interface AfterToolResult {
  output?: string;
  note?: string;
}
export interface BeforeToolResult {
  args?: Record<string, unknown>;
  /** Answer the call without running the tool. */
  output?: string;
  note?: string;
}

// biome-ignore lint/suspicious/noConfusingVoidType: hooks may return nothing at all
type Maybe<T> = T | undefined | void | Promise<T | undefined | void>;

/** NexAU's hook order: before-hooks first→last, after-hooks last→first. */
export interface Middleware {
  name: string;
  beforeModel?(view: LoopView): Maybe<BeforeModelResult>;
  afterModel?(view: LoopView, response: ChatResponse): Maybe<{ note?: string }>;
  beforeTool?(view: LoopView, call: ToolCallView): Maybe<BeforeToolResult>;
  afterTool?(view: LoopView, call: ToolCallView, output: string): Maybe<AfterToolResult>;
  /** Built-in hone:context_budget only: the agent loop keeps the conversation inside the window with these. */
  contextBudget?: ContextBudgetParams;
}

export type MiddlewareNote = { middleware: string; hook: string; note: string };

export class MiddlewareChain {
  constructor(private readonly list: readonly Middleware[]) {}

  async beforeModel(view: LoopView, notes: MiddlewareNote[]): Promise<ChatMessage[]> {
    const appended: ChatMessage[] = [];
    for (const m of this.list) {
      if (view.signal?.aborted) break;
      const r = await m.beforeModel?.({ ...view, messages: [...view.messages, ...appended] });
      if (!r) continue;
      if (r.append) appended.push(...r.append);
      if (r.note) notes.push({ middleware: m.name, hook: "beforeModel", note: r.note });
    }
    return appended;
  }

  async afterModel(view: LoopView, response: ChatResponse, notes: MiddlewareNote[]): Promise<void> {
    for (const m of [...this.list].reverse()) {
      if (view.signal?.aborted) break;
      const r = await m.afterModel?.(view, response);
      if (r?.note) notes.push({ middleware: m.name, hook: "afterModel", note: r.note });
    }
  }

  async beforeTool(
    view: LoopView,
    call: ToolCallView,
    notes: MiddlewareNote[],
  ): Promise<{ call: ToolCallView; output?: string }> {
    let current = call;
    for (const m of this.list) {
      if (view.signal?.aborted) break;
      const r = await m.beforeTool?.(view, current);
      if (!r) continue;
      if (r.note) notes.push({ middleware: m.name, hook: "beforeTool", note: r.note });
      if (r.args) current = { ...current, args: r.args };
      if (r.output !== undefined) return { call: current, output: r.output };
    }
    return { call: current };
  }

  async afterTool(view: LoopView, call: ToolCallView, output: string, notes: MiddlewareNote[]): Promise<string> {
    let current = output;
    for (const m of [...this.list].reverse()) {
      if (view.signal?.aborted) break;
      const r = await m.afterTool?.(view, call, current);
      if (!r) continue;
      if (r.output !== undefined) current = r.output;
      if (r.note) notes.push({ middleware: m.name, hook: "afterTool", note: r.note });
    }
    return current;
  }
}
