import type { ChatRequest, ToolCall } from "../types.ts";
import { decideDiscoveryStep, toToolCall } from "./discovery-executor.ts";
import { seedFrom } from "./rng.ts";

export interface PolicyReply {
  content: string | null;
  tool_calls: ToolCall[];
}

/** A role the offline model can play, recognised from the request; the first that claims a request answers it. */
export interface OfflineRole {
  name: string;
  claims(request: ChatRequest): boolean;
  reply(request: ChatRequest): PolicyReply;
}

const hasTools = (request: ChatRequest, ...names: string[]) => {
  const have = new Set((request.tools ?? []).map((t) => t.function.name));
  return names.every((n) => have.has(n));
};

function callId(request: ChatRequest, name: string): string {
  return `call_${seedFrom(request.messages.length, name, request.sampling?.seed).toString(16)}`;
}

const discoveryExecutor: OfflineRole = {
  name: "discovery-executor",
  claims: (r) => hasTools(r, "edit_program", "evaluate_program"),
  reply: (r) => {
    const decision = decideDiscoveryStep(r);
    return { content: null, tool_calls: [toToolCall(decision, callId(r, decision.name))] };
  },
};

/** With exactly one tool offered (a connectivity check, a forced call), the model calls it with minimal arguments. */
const singleTool: OfflineRole = {
  name: "single-tool",
  claims: (r) => (r.tools ?? []).length === 1,
  reply: (r) => {
    const fn = r.tools?.[0]?.function;
    const props = (fn?.parameters?.properties ?? {}) as Record<string, { type?: string }>;
    const required = (fn?.parameters?.required ?? []) as string[];
    const args = Object.fromEntries(
      required.map((k) => [
        k,
        props[k]?.type === "number" || props[k]?.type === "integer" ? 0 : props[k]?.type === "boolean" ? true : "pong",
      ]),
    );
    return { content: null, tool_calls: [toToolCall({ name: fn?.name ?? "tool", args }, callId(r, fn?.name ?? "tool"))] };
  },
};

const fallback: OfflineRole = {
  name: "fallback",
  claims: () => true,
  reply: (r) => {
    if (hasTools(r, "finish")) {
      return {
        content: null,
        tool_calls: [toToolCall({ name: "finish", args: { summary: "offline model: nothing to do" } }, callId(r, "finish"))],
      };
    }
    return { content: "The offline model only acts through hone's own tools; it does not understand language.", tool_calls: [] };
  },
};

const roles: OfflineRole[] = [discoveryExecutor, singleTool];

/**
 * Adds a role ahead of the single-tool caller and the fallback (proposer, QA solver…), in registration order; one
 * line per role at its module's registration. (A harness with one tool, such as harnesses/coder, is still a role's.)
 */
export function registerOfflineRole(role: OfflineRole): void {
  if (!roles.some((r) => r.name === role.name)) roles.splice(roles.indexOf(singleTool), 0, role);
}

export function offlineReply(request: ChatRequest): PolicyReply {
  const role = roles.find((r) => r.claims(request)) ?? fallback;
  return role.reply(request);
}
