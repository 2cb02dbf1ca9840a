import { Ajv } from "ajv";

/**
 * What OpenAI's chat-completions endpoint refuses, as a pure check over a request body: the first problem with the
 * status, message, param and code the API answers with, or undefined. Written from the API reference and the API's
 * own error messages; at least as strict as the real thing where hone could trip.
 */
export interface Refusal {
  status: number;
  message: string;
  param: string | null;
  code: string | null;
}

const TOP_LEVEL = new Set([
  "model",
  "messages",
  "audio",
  "frequency_penalty",
  "function_call",
  "functions",
  "logit_bias",
  "logprobs",
  "max_completion_tokens",
  "max_tokens",
  "metadata",
  "modalities",
  "n",
  "parallel_tool_calls",
  "prediction",
  "presence_penalty",
  "prompt_cache_key",
  "reasoning_effort",
  "response_format",
  "safety_identifier",
  "seed",
  "service_tier",
  "stop",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "user",
  "verbosity",
  "web_search_options",
]);
/** What reasoning models (o-series, gpt-5) refuse; temperature and top_p are allowed only at their default, 1. */
const NOT_FOR_REASONING = [
  "presence_penalty",
  "frequency_penalty",
  "logprobs",
  "top_logprobs",
  "logit_bias",
  "max_tokens",
  "seed",
];
const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"];
const MESSAGE_KEYS: Record<string, string[]> = {
  system: ["role", "content", "name"],
  developer: ["role", "content", "name"],
  user: ["role", "content", "name"],
  assistant: ["role", "content", "name", "tool_calls", "refusal", "audio", "function_call"],
  tool: ["role", "content", "tool_call_id"],
};

export const isReasoningModel = (model: string) => /^o\d+(?:$|-)/.test(model) || /^gpt-5(?!.*-chat)/.test(model);

const refuse = (message: string, param: string | null = null, code: string | null = null): Refusal => ({
  status: 400,
  message,
  param,
  code,
});
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const ajv = new Ajv({ strict: false });

export function checkOpenAIRequest(body: Record<string, unknown>): Refusal | undefined {
  for (const k of Object.keys(body)) if (!TOP_LEVEL.has(k)) return refuse(`Unrecognized request argument supplied: ${k}`);
  if (typeof body.model !== "string") return refuse("you must provide a model parameter", "model");
  return checkSampling(body) ?? checkTools(body) ?? checkMessages(body.messages);
}

function checkSampling(body: Record<string, unknown>): Refusal | undefined {
  const model = body.model as string;
  if (isReasoningModel(model)) {
    for (const k of NOT_FOR_REASONING)
      if (k in body)
        return refuse(
          k === "max_tokens"
            ? "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
            : `Unsupported parameter: '${k}' is not supported with this model.`,
          k,
          "unsupported_parameter",
        );
    for (const k of ["temperature", "top_p"])
      if (k in body && body[k] !== 1)
        return refuse(
          `Unsupported value: '${k}' does not support ${body[k]} with this model. Only the default (1) value is supported.`,
          k,
          "unsupported_value",
        );
  } else if ("reasoning_effort" in body) {
    return refuse("Unrecognized request argument supplied: reasoning_effort", "reasoning_effort");
  }
  const range = (k: string, lo: number, hi: number) =>
    k in body && (typeof body[k] !== "number" || (body[k] as number) < lo || (body[k] as number) > hi)
      ? refuse(`Invalid '${k}': expected a number between ${lo} and ${hi}.`, k, "invalid_value")
      : undefined;
  const problem =
    range("temperature", 0, 2) ??
    range("top_p", 0, 1) ??
    range("presence_penalty", -2, 2) ??
    range("frequency_penalty", -2, 2) ??
    range("max_completion_tokens", 1, 1e9);
  if (problem) return problem;
  if ("seed" in body && !Number.isInteger(body.seed)) return refuse("Invalid 'seed': expected an integer.", "seed");
  if ("reasoning_effort" in body && !EFFORTS.includes(body.reasoning_effort as string))
    return refuse(`Invalid value for 'reasoning_effort': '${body.reasoning_effort}'.`, "reasoning_effort", "invalid_value");
  if ("stream" in body && typeof body.stream !== "boolean") return refuse("Invalid type for 'stream'.", "stream");
  if ("stream_options" in body) {
    if (body.stream !== true)
      return refuse("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options");
    const so = body.stream_options;
    if (!isObject(so) || Object.keys(so).some((k) => k !== "include_usage" && k !== "include_obfuscation"))
      return refuse("Invalid 'stream_options'.", "stream_options");
  }
  return undefined;
}

function checkTools(body: Record<string, unknown>): Refusal | undefined {
  const tools = body.tools;
  if (tools === undefined) {
    for (const k of ["tool_choice", "parallel_tool_calls"])
      if (k in body) return refuse(`Invalid value for '${k}': '${k}' is only allowed when 'tools' are specified.`, k);
    return undefined;
  }
  if (!Array.isArray(tools) || tools.length === 0)
    return refuse("Invalid 'tools': empty array. Expected an array with minimum length 1.", "tools");
  for (const [i, t] of tools.entries()) {
    const where = `tools[${i}]`;
    if (!isObject(t) || t.type !== "function" || !isObject(t.function))
      return refuse(`Missing required parameter: '${where}.function'.`, where);
    const f = t.function;
    const extra =
      Object.keys(t).find((k) => k !== "type" && k !== "function") ??
      Object.keys(f).find((k) => !["name", "description", "parameters", "strict"].includes(k));
    if (extra) return refuse(`Unrecognized request argument supplied: ${where}.${extra}`, where);
    if (typeof f.name !== "string" || !/^[a-zA-Z0-9_-]{1,64}$/.test(f.name))
      return refuse(
        `Invalid '${where}.function.name': string does not match pattern '^[a-zA-Z0-9_-]+$'.`,
        `${where}.function.name`,
      );
    if (f.description !== undefined && typeof f.description !== "string")
      return refuse(`Invalid '${where}.function.description'.`, where);
    if (f.parameters !== undefined) {
      const p = f.parameters;
      if (!isObject(p) || p.type !== "object" || !ajv.validateSchema(p))
        return refuse(
          `Invalid schema for function '${String(f.name)}': schema must be a JSON Schema of 'type: "object"'.`,
          `${where}.function.parameters`,
          "invalid_function_parameters",
        );
    }
  }
  const choice = body.tool_choice;
  if (
    choice !== undefined &&
    !["none", "auto", "required"].includes(choice as string) &&
    !(isObject(choice) && choice.type === "function")
  )
    return refuse(`Invalid value: '${String(choice)}'. Supported values are: 'none', 'auto', and 'required'.`, "tool_choice");
  if ("parallel_tool_calls" in body && typeof body.parallel_tool_calls !== "boolean")
    return refuse("Invalid type for 'parallel_tool_calls'.", "parallel_tool_calls");
  // The o-series refuse it outright (o1, o3-mini, o3, o4-mini); the gpt-5 family takes it.
  if ("parallel_tool_calls" in body && /^o\d+(?:$|-)/.test(body.model as string))
    return refuse(
      "Unsupported parameter: 'parallel_tool_calls' is not supported with this model.",
      "parallel_tool_calls",
      "unsupported_parameter",
    );
  return undefined;
}

const textContent = (c: unknown) =>
  typeof c === "string" ||
  (Array.isArray(c) && c.length > 0 && c.every((p) => isObject(p) && p.type === "text" && typeof p.text === "string"));

function checkMessages(messages: unknown): Refusal | undefined {
  if (!Array.isArray(messages) || messages.length === 0)
    return refuse("Invalid 'messages': empty array. Expected an array with minimum length 1.", "messages");
  let pending: Set<string> | undefined; // tool_call ids of the last assistant message still waiting for a result
  for (const [i, m] of messages.entries()) {
    const where = `messages[${i}]`;
    if (!isObject(m) || typeof m.role !== "string" || !MESSAGE_KEYS[m.role])
      return refuse(
        `Invalid value: '${String(isObject(m) ? m.role : m)}'. Supported values are: 'system', 'assistant', 'user', 'tool', and 'developer'.`,
        `${where}.role`,
      );
    const extra = Object.keys(m).find((k) => !MESSAGE_KEYS[m.role as string]?.includes(k));
    if (extra) return refuse(`Additional properties are not allowed ('${extra}' was unexpected) - '${where}'`, where);
    if (m.role !== "tool" && pending?.size)
      return refuse(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(", ")}`,
        "messages",
        "invalid_request_error",
      );
    if (m.role === "tool") {
      if (typeof m.tool_call_id !== "string")
        return refuse(`Missing required parameter: '${where}.tool_call_id'.`, `${where}.tool_call_id`);
      if (pending === undefined)
        return refuse(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `${where}.role`,
        );
      if (!pending.delete(m.tool_call_id))
        return refuse(
          `Invalid parameter: 'tool_call_id' of '${m.tool_call_id}' not found in 'tool_calls' of previous message.`,
          `${where}.tool_call_id`,
        );
      if (!textContent(m.content))
        return refuse(
          `Invalid value for 'content': expected a string, got ${JSON.stringify(m.content ?? null)}.`,
          `${where}.content`,
        );
      continue;
    }
    pending = undefined;
    if (m.role === "assistant") {
      const calls = m.tool_calls;
      if (calls !== undefined) {
        if (!Array.isArray(calls) || calls.length === 0)
          return refuse(
            `Invalid '${where}.tool_calls': empty array. Expected an array with minimum length 1.`,
            `${where}.tool_calls`,
          );
        for (const [j, c] of calls.entries()) {
          const ok =
            isObject(c) &&
            typeof c.id === "string" &&
            c.id.length > 0 &&
            c.type === "function" &&
            isObject(c.function) &&
            typeof c.function.name === "string" &&
            typeof c.function.arguments === "string" &&
            Object.keys(c).every((k) => ["id", "type", "function"].includes(k));
          if (!ok) return refuse(`Invalid '${where}.tool_calls[${j}]'.`, `${where}.tool_calls[${j}]`);
        }
        pending = new Set(calls.map((c) => (c as { id: string }).id));
      } else if (!textContent(m.content)) {
        return refuse(
          `Invalid value for 'content': expected a string, got ${JSON.stringify(m.content ?? null)}.`,
          `${where}.content`,
        );
      }
      if (m.content !== undefined && m.content !== null && !textContent(m.content))
        return refuse(`Invalid '${where}.content'.`, `${where}.content`);
    } else if (!textContent(m.content)) {
      return refuse(
        `Invalid value for 'content': expected a string, got ${JSON.stringify(m.content ?? null)}.`,
        `${where}.content`,
      );
    }
  }
  if (pending?.size)
    return refuse(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(", ")}`,
      "messages",
    );
  return undefined;
}
