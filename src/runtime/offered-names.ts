import type { ToolSpec } from "../harness/types.ts";
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall } from "../model/types.ts";

// The names the model is offered for a harness's tools, when they are not hone's (ToolSpec.offeredAs: an imported
// NexAU package offers edit_solution, evaluate_solution and LoadSkill, the names its own prompt uses). The agent loop,
// middleware, tools and trajectories work in hone's names; only what goes to the model and what comes back from it
// is renamed, here.

/** hone's name → the offered one (`toModel`) and back (`fromModel`); only tools whose names differ. */
export interface OfferedNames {
  toModel: ReadonlyMap<string, string>;
  fromModel: ReadonlyMap<string, string>;
}

/** The renaming a harness's tools ask for; undefined when every tool is offered under hone's own name. */
export function offeredNames(tools: readonly Pick<ToolSpec, "name" | "offeredAs">[]): OfferedNames | undefined {
  const pairs = tools.filter((t) => t.offeredAs && t.offeredAs !== t.name).map((t) => [t.name, t.offeredAs as string] as const);
  if (pairs.length === 0) return undefined;
  return { toModel: new Map(pairs), fromModel: new Map(pairs.map(([hone, offered]) => [offered, hone])) };
}

const renamed = (calls: ToolCall[], names: ReadonlyMap<string, string>): ToolCall[] =>
  calls.map((c) => {
    const to = names.get(c.function.name);
    return to === undefined ? c : { ...c, function: { ...c.function, name: to } };
  });

function messageToModel(m: ChatMessage, names: ReadonlyMap<string, string>): ChatMessage {
  return m.role === "assistant" && m.tool_calls?.length ? { ...m, tool_calls: renamed(m.tool_calls, names) } : m;
}

/** The request as the model sees it: offered tools and the earlier calls in the conversation under the offered names. */
export function requestToModel(request: ChatRequest, names: OfferedNames | undefined): ChatRequest {
  if (!names) return request;
  const to = names.toModel;
  return {
    ...request,
    messages: request.messages.map((m) => messageToModel(m, to)),
    ...(request.tools
      ? {
          tools: request.tools.map((t) => {
            const name = to.get(t.function.name);
            return name === undefined ? t : { ...t, function: { ...t.function, name } };
          }),
        }
      : {}),
  };
}

/** The model's reply in hone's names: a call by an offered name becomes a call of hone's tool. */
export function responseFromModel(response: ChatResponse, names: OfferedNames | undefined): ChatResponse {
  if (!names || response.message.tool_calls.length === 0) return response;
  return { ...response, message: { ...response.message, tool_calls: renamed(response.message.tool_calls, names.fromModel) } };
}

/** The name the model knows a tool by. */
export const offeredName = (name: string, names: OfferedNames | undefined): string => names?.toModel.get(name) ?? name;

/**
 * The renaming for `model`: none for hone's offline model (its id ends in #offline, src/model/resolve.ts), which plays
 * hone's own tool protocol by hone's names (edit_program, evaluate_program); every other model is offered the names.
 */
export function modelOffered(model: Pick<ChatModel, "id">, tools: readonly Pick<ToolSpec, "name" | "offeredAs">[]) {
  return model.id.endsWith("#offline") ? undefined : offeredNames(tools);
}
