import type { Dialect } from "./dialect.ts";
import { sharedOfflineServerThread } from "./offline/threaded.ts";
import { OFFLINE_MODEL_ID } from "./offline/wire.ts";
import { OpenAICompatibleModel } from "./openai-compatible.ts";
import { defaultRetryPolicy, type RetryPolicy, withRetries } from "./retry.ts";
import { resolveTimeouts, type Timeouts } from "./timeouts.ts";
import type { ChatModel } from "./types.ts";

export interface ModelSettings {
  /** Model id on the endpoint, or `offline` for the built-in simulator. */
  model: string;
  baseUrl?: string;
  dialect?: Dialect;
  apiKeyEnv?: string;
  keepSampling?: boolean;
  /** Stream every call (true) or none (false); unset follows the harness's `llm_config.stream`. */
  stream?: boolean;
  /** Seconds per limit (timeouts.ts); unset ones take the defaults. */
  timeouts?: Partial<Timeouts>;
  /** Added latency per call of the in-process offline model. */
  offlineLatencyMs?: number;
  retry?: Partial<RetryPolicy>;
}

export interface ResolvedModel {
  model: ChatModel;
  /** The endpoint actually called (for the offline model, its loopback URL). */
  baseUrl: string;
  modelName: string;
  offline: boolean;
  close(): Promise<void>;
}

/**
 * Builds the ChatModel for a role. `--model offline` without a base URL serves the offline model in-process on
 * loopback (one thread per latency, shared by the process's roles), so the same HTTP client, retries and records run
 * as with a real endpoint.
 */
export async function resolveModel(s: ModelSettings): Promise<ResolvedModel> {
  const retry = { ...defaultRetryPolicy, totalMs: resolveTimeouts(s.timeouts).total * 1000, ...s.retry };
  if (s.model === OFFLINE_MODEL_ID && !s.baseUrl) {
    const server = await sharedOfflineServerThread(s.offlineLatencyMs ?? 0);
    const client = new OpenAICompatibleModel(
      { baseUrl: server.url, model: OFFLINE_MODEL_ID, dialect: "vllm", stream: s.stream, timeouts: s.timeouts },
      {},
    );
    return {
      model: withRetries(client, retry),
      baseUrl: server.url,
      modelName: OFFLINE_MODEL_ID,
      offline: true,
      close: () => server.close(),
    };
  }
  if (!s.baseUrl) throw new Error("a base URL is needed for a model other than `offline`");
  const client = new OpenAICompatibleModel({
    baseUrl: s.baseUrl,
    model: s.model,
    dialect: s.dialect,
    apiKeyEnv: s.apiKeyEnv,
    keepSampling: s.keepSampling,
    stream: s.stream,
    timeouts: s.timeouts,
  });
  return { model: withRetries(client, retry), baseUrl: s.baseUrl, modelName: s.model, offline: false, close: async () => {} };
}
