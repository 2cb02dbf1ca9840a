import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { brain, promptTokens, readJson, sendJson, sendStream, sendWhole } from "./fake-chat.ts";
import { listenLoopback } from "./loopback.ts";
import { checkOpenAIRequest, isReasoningModel, type Refusal } from "./openai-rules.ts";

export interface StrictOpenAIOptions {
  /** Models served (default a reasoning model and a chat model). */
  models?: string[];
  /** A prompt longer than this many tokens is refused with code context_length_exceeded. */
  contextWindow?: number;
  /** Require this bearer token. */
  apiKey?: string;
}

/**
 * An OpenAI-like server that refuses what OpenAI refuses (openai-rules.ts) and answers with the offline model's
 * policy: tool-call ids `call_…`, `refusal`/`annotations` fields, reasoning models' reasoning_tokens in usage but
 * never their reasoning text, and streaming with usage in a last chunk. Every refusal is kept, so a test can
 * assert that hone sent nothing OpenAI would refuse.
 */
export async function startStrictOpenAI(o: StrictOpenAIOptions = {}) {
  const models = o.models ?? ["o4-mini", "gpt-4.1-mini"];
  const refusals: (Refusal & { path: string })[] = [];
  const requests: Record<string, unknown>[] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    const body = await readJson(req);
    const fail = (r: Refusal) => {
      refusals.push({ ...r, path });
      sendJson(res, r.status, { error: { message: r.message, type: "invalid_request_error", param: r.param, code: r.code } });
    };
    if (o.apiKey && req.headers.authorization !== `Bearer ${o.apiKey}`)
      return fail({ status: 401, message: "Incorrect API key provided.", param: null, code: "invalid_api_key" });
    if (req.method === "GET" && path === "/v1/models")
      return sendJson(res, 200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "system" })),
      });
    if (req.method !== "POST" || path !== "/v1/chat/completions")
      return fail({ status: 404, message: `Invalid URL (${req.method} ${path})`, param: null, code: null });
    if (!body)
      return fail({ status: 400, message: "We could not parse the JSON body of your request.", param: null, code: null });
    requests.push(body);
    const problem = checkOpenAIRequest(body);
    if (problem) return fail(problem);
    const model = body.model as string;
    if (!models.includes(model))
      return fail({
        status: 404,
        message: `The model \`${model}\` does not exist or you do not have access to it.`,
        param: null,
        code: "model_not_found",
      });
    const prompt = promptTokens(body);
    if (o.contextWindow !== undefined && prompt > o.contextWindow)
      return fail({
        status: 400,
        message: `This model's maximum context length is ${o.contextWindow} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
        param: "messages",
        code: "context_length_exceeded",
      });
    const r = brain(body);
    const id = `chatcmpl-${++n}`;
    const calls = r.tool_calls.map((c, i) => ({
      ...c,
      id: `call_${createHash("sha256").update(`${id}:${i}`).digest("hex").slice(0, 24)}`,
    }));
    const reasoningTokens = isReasoningModel(model) ? 64 : 0;
    const completion = 8 + reasoningTokens + Math.ceil(JSON.stringify(r.tool_calls).length / 4);
    const answer = {
      id,
      model: `${model}-2025-04-16`,
      message: {
        role: "assistant",
        content: r.content,
        refusal: null,
        annotations: [],
        ...(calls.length ? { tool_calls: calls } : {}),
      },
      finish_reason: calls.length ? "tool_calls" : "stop",
      usage: {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: reasoningTokens,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
      extra: { service_tier: "default", system_fingerprint: null },
    };
    if (body.stream === true) {
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      return sendStream(res, answer, { includeUsage });
    }
    sendWhole(res, answer);
  });
  return { ...(await listenLoopback(server)), refusals, requests };
}
