import { createServer, type ServerResponse } from "node:http";
import { brain, promptTokens, readJson, sendJson, sendStream, sendWhole } from "./fake-chat.ts";
import { listenLoopback } from "./loopback.ts";

export interface FakeVllmOptions {
  /** `--max-model-len`: listed in /v1/models; a prompt plus max_tokens past it is refused with vLLM's 400. */
  maxModelLen?: number;
  /** The field reasoning comes back in: vLLM ≥ 0.11 says `reasoning`, older releases `reasoning_content`; false: none. */
  reasoning?: "reasoning" | "reasoning_content" | false;
  /** Errors with their fields at the top level, as vLLM releases before the `{"error": …}` shape answered. */
  legacyErrors?: boolean;
  /** A release before `tool_choice: "required"` existed (refused as a validation error). */
  noRequiredToolChoice?: boolean;
  /** A Mistral model: tool calls come back without ids, and every id sent must be 9 alphanumeric characters. */
  mistralIds?: boolean;
  /** The first N chat requests stall: a stream sends its first chunk and nothing more; a whole answer never comes. */
  stallFirst?: number;
}

/** ChatCompletionRequest's fields (vLLM's own extras included); anything else is refused, as releases with extra=forbid do. */
const FIELDS = new Set(
  (
    "model messages frequency_penalty logit_bias logprobs top_logprobs max_tokens max_completion_tokens n presence_penalty " +
    "response_format seed stop stream stream_options temperature top_p tools tool_choice reasoning_effort include_reasoning " +
    "parallel_tool_calls user use_beam_search top_k min_p repetition_penalty length_penalty stop_token_ids " +
    "include_stop_str_in_output ignore_eos min_tokens skip_special_tokens spaces_between_special_tokens truncate_prompt_tokens " +
    "prompt_logprobs allowed_token_ids bad_words echo add_generation_prompt continue_final_message add_special_tokens documents " +
    "chat_template chat_template_kwargs mm_processor_kwargs structured_outputs guided_json guided_regex guided_choice " +
    "guided_grammar priority request_id return_tokens_as_token_ids cache_salt kv_transfer_params vllm_xargs thinking_token_budget"
  ).split(" "),
);
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

/**
 * A vLLM-like server: /v1/models with max_model_len (base model and loaded LoRA adapters), runtime LoRA loading
 * (POST /v1/load_lora_adapter), chat completions answered with the offline model's policy and the model's reasoning,
 * whole or streamed, and vLLM's refusals: unknown fields, unserved models, a context-length 400 past max_model_len,
 * and, as configured, an older release's or a Mistral model's. Refusals are kept for the tests.
 */
export async function startFakeVllm(baseModel: string, o: FakeVllmOptions = {}) {
  const served = new Set([baseModel]);
  const loads: { lora_name: string; lora_path: string }[] = [];
  const chatModels: string[] = [];
  const refusals: { status: number; message: string }[] = [];
  const requests: Record<string, unknown>[] = [];
  let chats = 0;
  const reasoningField = o.reasoning ?? "reasoning";
  const fail = (res: ServerResponse, status: number, message: string, type = "BadRequestError") => {
    refusals.push({ status, message });
    const fields = { message, type, param: null, code: status };
    sendJson(res, status, o.legacyErrors ? { object: "error", ...fields } : { error: fields });
  };
  const server = createServer(async (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const body = await readJson(req);
    if (!body) return fail(res, 400, "JSON decode error");
    if (path === "/v1/models")
      return sendJson(res, 200, {
        object: "list",
        data: [...served].map((id) => ({
          id,
          object: "model",
          created: 1_700_000_000,
          owned_by: "vllm",
          root: baseModel,
          parent: id === baseModel ? null : baseModel,
          ...(o.maxModelLen ? { max_model_len: o.maxModelLen } : {}),
          permission: [],
        })),
      });
    if (path === "/v1/load_lora_adapter" && req.method === "POST") {
      if (typeof body.lora_name !== "string" || typeof body.lora_path !== "string")
        return fail(res, 400, "lora_name and lora_path are required");
      loads.push(body as { lora_name: string; lora_path: string });
      served.add(body.lora_name);
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
    }
    if (path !== "/v1/chat/completions") return fail(res, 404, "Not Found", "NotFoundError");
    requests.push(body);
    const problem = check(body, o);
    if (problem) return fail(res, 400, problem);
    if (!served.has(body.model as string))
      return fail(res, 404, `The model \`${String(body.model)}\` does not exist.`, "NotFoundError");
    chatModels.push(body.model as string);
    const prompt = promptTokens(body);
    const asked = (body.max_completion_tokens ?? body.max_tokens ?? 0) as number;
    if (o.maxModelLen !== undefined && prompt + asked > o.maxModelLen)
      return fail(
        res,
        400,
        o.legacyErrors
          ? `This model's maximum context length is ${o.maxModelLen} tokens. However, you requested ${prompt + asked} tokens (${prompt} in the messages, ${asked} in the completion). Please reduce the length of the messages or completion.`
          : `This model's maximum context length is ${o.maxModelLen} tokens. However, you requested ${asked} output tokens and your prompt contains at least ${prompt} input tokens, for a total of at least ${prompt + asked} tokens. Please reduce the length of the input prompt or the number of requested output tokens.`,
      );
    const stall = ++chats <= (o.stallFirst ?? 0);
    const r = brain(body);
    const calls = r.tool_calls.map((c, i) =>
      o.mistralIds ? { type: c.type, function: c.function } : { ...c, id: `chatcmpl-tool-${chats}${i}` },
    );
    const completion = 10 + Math.ceil(JSON.stringify(r).length / 4);
    const answer = {
      id: `chatcmpl-${chats}`,
      model: body.model as string,
      message: {
        role: "assistant",
        content: r.content,
        ...(reasoningField ? { [reasoningField]: r.reasoning } : {}),
        ...(calls.length ? { tool_calls: calls } : {}),
      },
      finish_reason: calls.length ? "tool_calls" : "stop",
      usage: {
        prompt_tokens: prompt,
        total_tokens: prompt + completion,
        completion_tokens: completion,
        prompt_tokens_details: null,
      },
    };
    if (body.stream === true) {
      const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
      return sendStream(res, answer, { includeUsage, stallAfter: stall ? 1 : undefined });
    }
    if (stall) return; // A whole answer that never comes.
    sendWhole(res, answer);
  });
  return { ...(await listenLoopback(server)), loads, chatModels, refusals, requests };
}

/** What vLLM's request validation (and a Mistral model's template) refuses. */
function check(body: Record<string, unknown>, o: FakeVllmOptions): string | undefined {
  for (const k of Object.keys(body))
    if (!FIELDS.has(k)) return `[{'type': 'extra_forbidden', 'loc': ('body', '${k}'), 'msg': 'Extra inputs are not permitted'}]`;
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages must be a non-empty list";
  if (body.stream_options !== undefined && body.stream !== true) return "Stream options can only be defined when `stream=True`.";
  const choice = body.tool_choice;
  if (choice === "required" && o.noRequiredToolChoice)
    return `[{'type': 'literal_error', 'loc': ('body', 'tool_choice'), 'msg': "Input should be 'none' or 'auto'", 'input': 'required'}]`;
  if (choice !== undefined && choice !== "none" && body.tools === undefined)
    return "When using `tool_choice`, `tools` must be set.";
  for (const [i, m] of (body.messages as Record<string, unknown>[]).entries()) {
    if (!["system", "user", "assistant", "tool", "developer"].includes(m?.role as string)) return `messages.${i}: unknown role`;
    if (m.role === "tool" && typeof m.tool_call_id !== "string") return `messages.${i}: a tool message needs tool_call_id`;
    if (m.role === "assistant" && m.reasoning !== undefined && typeof m.reasoning !== "string")
      return `messages.${i}.reasoning: Input should be a valid string`;
    if (!o.mistralIds) continue;
    const ids = m.role === "tool" ? [m.tool_call_id] : ((m.tool_calls ?? []) as { id?: unknown }[]).map((c) => c.id);
    for (const id of ids)
      if (typeof id !== "string" || !MISTRAL_ID.test(id))
        return `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`;
  }
  return undefined;
}
