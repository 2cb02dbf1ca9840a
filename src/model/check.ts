import { oneLine } from "../printable.ts";
import { withoutPassword } from "../secret-url.ts";
import { ModelError } from "./errors.ts";
import { type EndpointOptions, OpenAICompatibleModel } from "./openai-compatible.ts";
import type { ChatRequest, ChatResponse } from "./types.ts";

export interface CheckReport {
  ok: boolean;
  baseUrl: string;
  model: string;
  models?: string[];
  steps: { step: string; ok: boolean; detail: string }[];
}

/** `hone models check`: list the endpoint's models, then make one tiny tool-calling request. */
export async function checkEndpoint(opts: EndpointOptions, env: NodeJS.ProcessEnv = process.env): Promise<CheckReport> {
  const client = new OpenAICompatibleModel({ ...opts, timeouts: { attempt: 30, first_byte: 30, ...opts.timeouts } }, env);
  // The report is printed (--json) and kept: a password in the base URL never is.
  const report: CheckReport = { ok: false, baseUrl: withoutPassword(opts.baseUrl), model: opts.model, steps: [] };
  try {
    report.models = await client.listModels();
    const listed = report.models.includes(opts.model);
    const window = listed ? await client.contextWindow() : undefined;
    report.steps.push({
      step: "list models",
      ok: listed,
      detail: listed
        ? `${report.models.length} model(s); "${opts.model}" is served${window ? ` with a context window of ${window} tokens` : ""}`
        : `"${opts.model}" is not among the served models: ${shownIds(report.models, 20) || "(none)"}`,
    });
    if (!listed) return report;
  } catch (err) {
    // An endpoint without a model list (Azure OpenAI's deployment URLs) can still serve the model: the preflight
    // lets it pass, and the tool call says whether it does.
    const noList = err instanceof ModelError && err.status === 404;
    report.steps.push({
      step: "list models",
      ok: noList,
      detail: noList
        ? `${withoutPassword(opts.baseUrl)} has no model list (HTTP 404); the tool call checks "${opts.model}" itself`
        : err instanceof ModelError
          ? err.message
          : String(err),
    });
    if (!noList) return report;
  }
  await checkToolCall(client, report);
  return report;
}

/** The first `n` model ids a server listed, as one line: a server's id may carry control characters (ESC). */
const shownIds = (ids: string[], n: number) =>
  ids
    .slice(0, n)
    .map((id) => oneLine(String(id)).slice(0, 200))
    .join(", ");

/** The answer's budget in the check's request. */
export const PING_MAX_TOKENS = 2048;

const PING: ChatRequest = {
  messages: [
    { role: "system", content: 'You are a connectivity check. Call the tool ping with the argument word set to "pong".' },
    { role: "user", content: "Call ping now." },
  ],
  tools: [
    {
      type: "function",
      function: {
        name: "ping",
        description: "Answer a connectivity check.",
        parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
      },
    },
  ],
  // A cap, not a cost: a model that calls the tool stops there. Reasoning models (o-series, gpt-5, Qwen3 and other
  // thinking models behind vLLM) spend their thinking from the same budget, and with 64 tokens they ran out before
  // the call (finish_reason "length", no tool call), failing the check of an endpoint that works.
  sampling: { max_tokens: PING_MAX_TOKENS, temperature: 0 },
};

/**
 * One tiny tool-calling request, with `tool_choice: "required"` first. vLLM releases before `required` was added
 * refuse it with a 400; then the check asks again with "auto" and says so (hone itself only ever sends "auto").
 */
async function checkToolCall(client: OpenAICompatibleModel, report: CheckReport): Promise<void> {
  let note = "";
  let res: ChatResponse;
  try {
    try {
      res = await client.complete({ ...PING, tool_choice: "required" });
    } catch (err) {
      if (!(err instanceof ModelError) || (err.kind !== "bad_request" && err.kind !== "no_tool_support")) throw err;
      note = ` (tool_choice "required" was refused, so "auto" was used: ${err.message.slice(0, 200)})`;
      res = await client.complete({ ...PING, tool_choice: "auto" });
    }
  } catch (err) {
    report.steps.push({ step: "tool call", ok: false, detail: err instanceof ModelError ? err.message : String(err) });
    return;
  }
  const call = res.message.tool_calls[0];
  if (!call) {
    const cut = res.finish_reason === "length";
    report.steps.push({
      step: "tool call",
      ok: false,
      detail: cut
        ? `the model used all ${PING_MAX_TOKENS} tokens of its answer without calling the tool (finish_reason "length"${res.usage.reasoning_tokens ? `, ${res.usage.reasoning_tokens} of them reasoning` : ""})${note}`
        : `the model answered without a tool call; tool calling may be off (vLLM: --enable-auto-tool-choice --tool-call-parser <parser>)${note}`,
    });
    return;
  }
  let parsed = true;
  try {
    JSON.parse(call.function.arguments || "{}");
  } catch {
    parsed = false;
  }
  report.steps.push({
    step: "tool call",
    ok: parsed,
    detail: parsed
      ? `called ${oneLine(call.function.name.slice(0, 200))} in ${Math.round(res.latency_ms)} ms (${res.usage.total_tokens} tokens)${note}`
      : `called ${oneLine(call.function.name.slice(0, 200))} but its arguments are not valid JSON: ${oneLine(call.function.arguments.slice(0, 200))}${note}`,
  });
  report.ok = parsed;
}

/**
 * Before a run writes anything: is the endpoint there and does it take our key? A server without a model list
 * (404) passes; an unreachable endpoint, a refused key or a model the list does not contain fails.
 */
export async function preflight(opts: EndpointOptions, env: NodeJS.ProcessEnv = process.env): Promise<ModelError | undefined> {
  const client = new OpenAICompatibleModel({ ...opts, timeouts: { first_byte: 5, ...opts.timeouts } }, env);
  try {
    const models = await client.listModels();
    if (models.length > 0 && !models.includes(opts.model)) {
      return new ModelError(
        "unknown_model",
        `${withoutPassword(opts.baseUrl)} does not serve model "${opts.model}"; it serves ${shownIds(models, 10)}`,
        { url: withoutPassword(opts.baseUrl) },
      );
    }
  } catch (err) {
    if (err instanceof ModelError && (err.kind === "unreachable" || err.kind === "unauthorized" || err.kind === "timeout"))
      return err;
  }
  return undefined;
}
