import type { Harness } from "../harness/types.ts";
import {
  addUsage,
  type ChatModel,
  type Sampling,
  type ToolCall,
  type ToolDefinition,
  type Usage,
  zeroUsage,
} from "../model/types.ts";
import type { TrajectorySink } from "../store/trajectory.ts";
import type { ToolWorld } from "../task/qa/benchmark.ts";
import { type AgentLoopResult, runAgentLoop } from "./agent-loop.ts";
import { type Environment, type ToolOutcome, toolError } from "./environment.ts";

/** What the simulated user says to end the conversation (τ-bench's stop token). */
export const STOP_TOKEN = "###STOP###";
/** The agent's opening line, as τ-bench's user simulator is shown it. */
export const GREETING = "Hi! How can I help you today?";

/** τ-bench's user prompt (LLMUserSimulationEnv): the instruction and the rules of playing the user. */
export function userSystemPrompt(instruction: string): string {
  return `You are a user interacting with an agent.\n\nInstruction: ${instruction}

Rules:
- Just generate one line at a time to simulate the user's message.
- Do not give away all the instruction at once. Only provide the information that is necessary for the current step.
- Do not hallucinate information that is not provided in the instruction. For example, if the agent asks for the order id but it is not mentioned in the instruction, do not make up an order id, just say you do not remember or have it.
- If the instruction goal is satisified, generate '${STOP_TOKEN}' as a standalone message without anything else to end the conversation.
- Do not repeat the exact instruction in the conversation. Instead, use your own words to convey the same information.
- Try to make the conversation as natural as possible, and stick to the personalities in the instruction.`;
}

/**
 * The simulated user: a model role that holds the task's instruction. Its own conversation has the agent's words as
 * `user` turns and its replies as `assistant` turns, as τ-bench keeps it; every call goes through the given model
 * (cached, recorded, replayable like the agent's) and into the trajectory.
 */
export class SimulatedUser {
  readonly usage: Usage = zeroUsage();
  calls = 0;
  private readonly messages: { role: "system" | "user" | "assistant"; content: string }[];

  constructor(
    private readonly model: ChatModel,
    instruction: string,
    private readonly sampling: Sampling,
    private readonly trajectory: TrajectorySink,
  ) {
    this.messages = [
      { role: "system", content: userSystemPrompt(instruction) },
      { role: "user", content: GREETING },
    ];
  }

  /** The user's first message, answering the greeting. */
  first(): Promise<string> {
    return this.next();
  }

  reply(agentText: string): Promise<string> {
    this.messages.push({ role: "user", content: agentText });
    return this.next();
  }

  private async next(): Promise<string> {
    const response = await this.model.complete({ messages: [...this.messages], tools: [], sampling: this.sampling });
    this.calls++;
    addUsage(this.usage, response.usage);
    this.trajectory.write({
      type: "model_call",
      role: "user",
      latency_ms: Math.round(response.latency_ms * 1000) / 1000,
      attempts: response.attempts,
      usage: response.usage,
      finish_reason: response.finish_reason,
      cached: response.cached ?? false,
    });
    const content = response.message.content ?? "";
    this.messages.push({ role: "assistant", content });
    return content;
  }
}

/**
 * The task side of the conversation: the world's tools, called with the agent's arguments exactly as written (the
 * raw JSON text of the reply, which `beginTurn` hands over), one call per reply as τ-bench runs them (only the
 * first; the others get an error and do not run), and for the oracle harnesses `oracle_answer`.
 */
export class WorldEnvironment implements Environment {
  private turn: { call: ToolCall; used: boolean }[] = [];
  ended = false;

  constructor(
    private readonly world: ToolWorld,
    private readonly oracleKind: "gold" | "wrong" | undefined,
  ) {}

  beginTurn(calls: readonly ToolCall[]): void {
    this.turn = calls.map((call) => ({ call, used: false }));
  }

  implements(tool: string): boolean {
    return tool === "oracle_answer" ? this.oracleKind !== undefined : this.world.tools.some((t) => t.function.name === tool);
  }

  exhausted(): boolean {
    return this.ended;
  }

  async call(tool: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    const i = this.turn.findIndex((t) => !t.used && t.call.function.name === tool && sameArgs(t.call.function.arguments, args));
    if (i >= 0) (this.turn[i] as { used: boolean }).used = true;
    if (i !== 0) return toolError("one tool call per reply: only the first call of a reply runs (τ-bench's rule); call it again");
    const raw = (this.turn[0] as { call: ToolCall }).call.function.arguments || "{}";
    const r = tool === "oracle_answer" ? await this.world.oracle(this.oracleKind ?? "gold") : await this.world.call(tool, raw);
    if (r.done) this.ended = true;
    return { output: r.observation, stop: r.done };
  }
}

function sameArgs(raw: string, args: Record<string, unknown>): boolean {
  try {
    return JSON.stringify(JSON.parse(raw || "{}")) === JSON.stringify(args);
  } catch {
    return false;
  }
}

export interface ConversationOptions {
  harness: Pick<Harness, "systemPrompt" | "maxIterations" | "skills" | "stopTools">;
  /** The harness's own tools (offered beside the world's). */
  tools: ToolDefinition[];
  model: ChatModel;
  userModel: ChatModel;
  world: ToolWorld;
  instruction: string;
  oracleKind?: "gold" | "wrong";
  sampling: Sampling;
  userSampling: Sampling;
  trajectory: TrajectorySink;
  deadline: number;
}

export interface ConversationResult {
  loop: AgentLoopResult;
  /** Whether the conversation ended as the benchmark ends one (the user's stop token or a terminating tool). */
  ended: boolean;
  userCalls: number;
  userUsage: Usage;
}

/**
 * A multi-turn conversation between the agent (the harness on its model, through runAgentLoop) and a simulated user:
 * the user opens, each text reply of the agent goes to the user (and to the world, which keeps what was said), each
 * tool call to the world, until the user says the stop token, a tool ends it, or the iteration cap.
 */
export async function runConversation(o: ConversationOptions): Promise<ConversationResult> {
  const user = new SimulatedUser(o.userModel, o.instruction, o.userSampling, o.trajectory);
  const env = new WorldEnvironment(o.world, o.oracleKind);
  let ended = false;
  const opening = await user.first();
  if (opening.includes(STOP_TOKEN)) {
    const loop: AgentLoopResult = { stopReason: "finish", iterations: 0, modelCalls: 0, usage: zeroUsage(), messages: [] };
    return { loop, ended: true, userCalls: user.calls, userUsage: user.usage };
  }
  const model: ChatModel = {
    id: o.model.id,
    wireBody: o.model.wireBody?.bind(o.model),
    async complete(request, signal) {
      const response = await o.model.complete(request, signal);
      env.beginTurn(response.message.tool_calls ?? []);
      return response;
    },
  };
  const own = new Set(o.tools.map((t) => t.function.name));
  const loop = await runAgentLoop({
    harness: { ...o.harness, systemPrompt: `${o.harness.systemPrompt}\n\n${o.world.policy}` },
    model,
    env,
    tools: [...o.tools, ...o.world.tools.filter((t) => !own.has(t.function.name))],
    taskMessage: opening,
    sampling: o.sampling,
    middlewares: [],
    trajectory: o.trajectory,
    budget: () => ({ used: 0, left: 0, total: 0 }),
    deadline: o.deadline,
    onText: async (content) => {
      await o.world.respond(content);
      const reply = await user.reply(content);
      if (reply.includes(STOP_TOKEN)) {
        ended = true;
        return undefined;
      }
      return reply;
    },
  });
  return { loop, ended: ended || env.ended, userCalls: user.calls, userUsage: user.usage };
}
