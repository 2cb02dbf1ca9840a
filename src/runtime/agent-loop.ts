import { setMaxListeners } from "node:events";
import type { Harness, Skill } from "../harness/types.ts";
import { ModelError } from "../model/errors.ts";
import {
  addUsage,
  type ChatMessage,
  type ChatModel,
  type ChatResponse,
  type Sampling,
  type ToolDefinition,
  type Usage,
  zeroUsage,
} from "../model/types.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import { ContextKeeper, defaultContextBudget } from "./context-keeper.ts";
import { type Environment, type ToolOutcome, toolError } from "./environment.ts";
import { type LoopView, type Middleware, MiddlewareChain, type MiddlewareNote } from "./middleware.ts";
import { type OfferedNames, offeredName, requestToModel, responseFromModel } from "./offered-names.ts";
import { withCallIds } from "./tool-call-ids.ts";

export type StopReason = "finish" | "budget_spent" | "iteration_cap" | "time_limit" | "model_stopped" | "model_error";

export interface AgentLoopOptions {
  harness: Pick<Harness, "systemPrompt" | "maxIterations" | "skills" | "stopTools">;
  model: ChatModel;
  env: Environment;
  tools: ToolDefinition[];
  taskMessage: string;
  sampling: Sampling;
  middlewares: Middleware[];
  trajectory: TrajectorySink;
  budget: () => LoopView["budget"];
  /** Absolute time (performance.now()) after which the rollout stops. */
  deadline: number;
  /** Consecutive text-only replies tolerated before the loop stops. */
  maxNudges?: number;
  /**
   * The other side of a conversation (runtime/conversation.ts): a text-only reply goes to it instead of a nudge, and
   * what it answers comes back as the next user message; undefined ends the conversation.
   */
  onText?: (content: string, iteration: number) => Promise<string | undefined>;
  /** Tools the model is offered under other names than hone's (offered-names.ts); the loop itself uses hone's. */
  offered?: OfferedNames;
}

export interface AgentLoopResult {
  stopReason: StopReason;
  iterations: number;
  modelCalls: number;
  usage: Usage;
  error?: string;
  messages: ChatMessage[];
}

export function systemMessage(
  systemPrompt: string,
  skills: readonly Skill[],
  canLoadSkills: boolean,
  skillTool = "load_skill",
): string {
  if (skills.length === 0 || !canLoadSkills) return systemPrompt;
  const index = skills.map((s) => `- \`${s.name}\`: ${s.description}`).join("\n");
  return `${systemPrompt}\n\n## Available skills (load one with ${skillTool})\n${index}`;
}

function parseArgs(raw: string): Record<string, unknown> | string {
  if (raw.trim() === "") return {};
  try {
    const v = JSON.parse(raw);
    if (v === null || typeof v !== "object" || Array.isArray(v)) return "the arguments must be a JSON object";
    return v as Record<string, unknown>;
  } catch (err) {
    return `the arguments are not valid JSON (${(err as Error).message}); send one JSON object`;
  }
}

/** The agent loop: model call, middleware, tool dispatch, until a stop condition. Every step goes to the trajectory. */
export async function runAgentLoop(o: AgentLoopOptions): Promise<AgentLoopResult> {
  const toolNames = new Set(o.tools.map((t) => t.function.name));
  const messages: ChatMessage[] = [
    {
      role: "system",
      content: systemMessage(
        o.harness.systemPrompt,
        o.harness.skills,
        toolNames.has("load_skill"),
        offeredName("load_skill", o.offered),
      ),
    },
    { role: "user", content: o.taskMessage },
  ];
  for (const m of messages)
    o.trajectory.write({
      type: "message",
      iteration: 0,
      role: m.role,
      content: m.content,
      source: m.role === "system" ? "harness" : "task",
    });
  const chain = new MiddlewareChain(o.middlewares);
  const usage = zeroUsage();
  const result = (stopReason: StopReason, iterations: number, modelCalls: number, error?: string): AgentLoopResult => ({
    stopReason,
    iterations,
    modelCalls,
    usage,
    error,
    messages,
  });
  const flushNotes = (notes: MiddlewareNote[], iteration: number) => {
    for (const n of notes) o.trajectory.write({ type: "middleware", iteration, ...n });
    notes.length = 0;
  };
  const notes: MiddlewareNote[] = [];
  let nudges = 0;
  let modelCalls = 0;
  // The context window: compacted before a call when the harness has hone:context_budget, and once after the server
  // refuses a prompt as too long whether it has or not (with the default parameters then).
  const budget = o.middlewares.find((m) => m.contextBudget)?.contextBudget;
  const budgeted = budget !== undefined;
  const keeper = new ContextKeeper(budget ?? defaultContextBudget(), o.sampling.max_tokens ?? 0, JSON.stringify(o.tools).length);
  const callIds = new Set<string>();
  const compacted = (c: ReturnType<ContextKeeper["beforeCall"]>, iteration: number, refusal?: string): boolean => {
    if (!c) return false;
    messages.splice(0, messages.length, ...c.compaction.messages);
    o.trajectory.write({ type: "compaction", iteration, ...c.record, ...(refusal ? { refusal } : {}) });
    return true;
  };

  // One deadline signal for the whole rollout (not a controller and timer per call); clients add a listener per
  // request, so the listener limit is lifted on this short-lived signal.
  const deadline = new AbortController();
  setMaxListeners(0, deadline.signal);
  const disarm = abortAt(deadline, o.deadline);
  try {
    return await loop();
  } finally {
    disarm();
  }

  /** One model call; a context-length refusal compacts the conversation and tries once more. */
  async function call(iteration: number): Promise<ChatResponse> {
    const request = async () =>
      responseFromModel(
        await o.model.complete(requestToModel({ messages, tools: o.tools, sampling: o.sampling }, o.offered), deadline.signal),
        o.offered,
      );
    let response: ChatResponse;
    try {
      // The list is not copied: nothing appends to it while the call is in flight.
      response = await request();
    } catch (err) {
      if (!(err instanceof ModelError) || err.kind !== "context_length") throw err;
      if (!compacted(keeper.afterRefusal(err, messages), iteration, err.message.slice(0, 500))) throw err;
      response = await request();
    }
    keeper.observe(response, messages);
    return response;
  }

  async function loop(): Promise<AgentLoopResult> {
    for (let iteration = 1; iteration <= o.harness.maxIterations; iteration++) {
      if (performance.now() >= o.deadline) return result("time_limit", iteration - 1, modelCalls);
      const view = (): LoopView => ({ iteration, messages, budget: o.budget(), signal: deadline.signal });
      const appended = await chain.beforeModel(view(), notes);
      messages.push(...appended);
      for (const m of appended)
        o.trajectory.write({ type: "message", iteration, role: m.role, content: m.content, source: "middleware" });
      flushNotes(notes, iteration);

      if (budgeted) compacted(keeper.beforeCall(messages), iteration);
      let response: ChatResponse;
      try {
        response = await call(iteration);
      } catch (err) {
        if (deadline.signal.aborted) return result("time_limit", iteration - 1, modelCalls);
        // A replay that meets an unrecorded request cannot continue faithfully: that is the run's failure, not the rollout's.
        if (err instanceof ModelError && err.kind === "replay_miss") throw err;
        const message = err instanceof ModelError ? err.message : String(err);
        o.trajectory.write({ type: "model_error", iteration, kind: err instanceof ModelError ? err.kind : "unknown", message });
        return result("model_error", iteration - 1, modelCalls, message);
      }
      modelCalls++;
      addUsage(usage, response.usage);
      o.trajectory.write({
        type: "model_call",
        iteration,
        latency_ms: Math.round(response.latency_ms * 1000) / 1000,
        attempts: response.attempts,
        usage: response.usage,
        finish_reason: response.finish_reason,
        cached: response.cached ?? false,
        ...(response.context_window !== undefined ? { context_window: response.context_window } : {}),
        ...(response.faults?.length ? { faults: response.faults } : {}),
      });
      const calls = withCallIds(response.message.tool_calls, iteration, callIds);
      const { reasoning, refusal } = response.message;
      messages.push({
        role: "assistant",
        content: response.message.content,
        ...(calls.length ? { tool_calls: calls } : {}),
        ...(reasoning ? { reasoning } : {}),
      });
      o.trajectory.write({
        type: "assistant",
        iteration,
        content: response.message.content,
        tool_calls: calls,
        ...(reasoning ? { reasoning } : {}),
        ...(refusal ? { refusal } : {}),
      });
      await chain.afterModel(view(), response, notes);
      flushNotes(notes, iteration);
      // Past the deadline (a slow hook), the step's tools are not started.
      if (deadline.signal.aborted) return result("time_limit", iteration, modelCalls);

      if (calls.length === 0 && o.onText) {
        const reply = await o.onText(response.message.content ?? "", iteration);
        if (reply === undefined) return result("finish", iteration, modelCalls);
        messages.push({ role: "user", content: reply });
        o.trajectory.write({ type: "message", iteration, role: "user", content: reply, source: "user" });
        continue;
      }
      if (calls.length === 0) {
        if (nudges >= (o.maxNudges ?? 2)) return result("model_stopped", iteration, modelCalls);
        nudges++;
        const nudge = "Reply with a tool call. Use the tools to make progress, and call finish when you are done.";
        messages.push({ role: "user", content: nudge });
        o.trajectory.write({ type: "message", iteration, role: "user", content: nudge, source: "runtime" });
        continue;
      }
      nudges = 0;

      let stop = false;
      for (const call of calls) {
        if (deadline.signal.aborted) return result("time_limit", iteration, modelCalls);
        const name = call.function.name;
        const parsed = parseArgs(call.function.arguments);
        let outcome: ToolOutcome;
        // Refused by the loop itself (not a tool's own error): the call was no valid action (invalid first attempts).
        const refused = typeof parsed === "string" || !toolNames.has(name);
        if (typeof parsed === "string") {
          outcome = toolError(parsed);
        } else if (!toolNames.has(name)) {
          const offered = [...toolNames].map((t) => offeredName(t, o.offered));
          outcome = toolError(`there is no tool named "${name}"; the tools are ${offered.join(", ")}`);
        } else {
          const before = await chain.beforeTool(view(), { name, args: parsed }, notes);
          outcome =
            before.output !== undefined
              ? { output: before.output }
              : await dispatch(o, before.call.name, before.call.args, deadline.signal);
          const output = await chain.afterTool(view(), before.call, outcome.output, notes);
          outcome = { ...outcome, output };
        }
        flushNotes(notes, iteration);
        messages.push({ role: "tool", tool_call_id: call.id, content: outcome.output });
        o.trajectory.write({
          type: "tool_result",
          iteration,
          id: call.id,
          name,
          output: outcome.output,
          error: outcome.error ?? false,
          ...(refused ? { refused: true } : {}),
        });
        // A stop tool's call the loop refused was no action: the model is told, and the rollout goes on.
        if (outcome.stop || (!refused && o.harness.stopTools.includes(name))) stop = true;
      }
      if (stop) return result("finish", iteration, modelCalls);
      if (o.env.exhausted()) return result("budget_spent", iteration, modelCalls);
    }
    return result("iteration_cap", o.harness.maxIterations, modelCalls);
  }
}

/** The longest delay setTimeout keeps; a longer one (a time limit past 24.8 days) would fire after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Aborts `controller` at `deadline` (performance.now() time), however far off; returns what cancels it. */
function abortAt(controller: AbortController, deadline: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    const left = deadline - performance.now();
    if (left <= 0) controller.abort();
    else timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
  };
  arm();
  return () => clearTimeout(timer);
}

async function dispatch(
  o: AgentLoopOptions,
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
): Promise<ToolOutcome> {
  if (name === "load_skill") {
    // NexAU's LoadSkill takes skill_name, hone's load_skill name.
    const wanted = args.name ?? args.skill_name;
    const skill = o.harness.skills.find((s) => s.name === wanted);
    if (!skill)
      return toolError(
        `no skill named "${String(wanted)}"; the skills are ${o.harness.skills.map((s) => s.name).join(", ") || "none"}`,
      );
    return { output: `# Skill: ${skill.name}\n\n${skill.body}` };
  }
  if (!o.env.implements(name)) return toolError(`the tool "${name}" is not available for this task`);
  return o.env.call(name, args, signal);
}
