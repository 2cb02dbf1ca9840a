import type OpenAI from "openai";
import { urlSecrets, withoutPassword } from "../secret-url.ts";
import { ClientTimeout } from "./client-timeout.ts";
import { parseCompletion, type RawChunk, type RawCompletion, StreamAccumulator } from "./completion-parse.ts";
import { buildRequestBody, type Dialect } from "./dialect.ts";
import { nodeFetchWith, streamSawDone } from "./http-transport.ts";
import { resolveTimeouts, type Timeouts } from "./timeouts.ts";
import type { ChatModel, ChatRequest, ChatResponse } from "./types.ts";

export interface EndpointOptions {
  baseUrl: string;
  model: string;
  dialect?: Dialect;
  /** Name of the environment variable holding the API key (default OPENAI_API_KEY). Never the key itself. */
  apiKeyEnv?: string;
  keepSampling?: boolean;
  /** Stream every call (true) or none (false); unset follows the request's `sampling.stream` (the harness). */
  stream?: boolean;
  /** Seconds; see timeouts.ts. `total` is the retry wrapper's. */
  timeouts?: Partial<Timeouts>;
}

/** Local servers accept any key; sending a placeholder keeps the client happy without inventing a secret. */
const NO_KEY = "no-key";

type CreateParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;
type StreamParams = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;

/**
 * The SDK and the mapping of its errors, loaded with a client's first call: a replay builds clients for their
 * request bodies (the cache keys) and never calls them, and `openai` is the largest module a command would load.
 */
async function importSdk() {
  const [{ default: sdk }, { toModelError }] = await Promise.all([import("openai"), import("./error-map.ts")]);
  return { sdk, toModelError };
}
type Sdk = Awaited<ReturnType<typeof importSdk>>;
/** A client of the SDK with the SDK's module itself (its error classes) and the mapping of those errors. */
type Session = { client: OpenAI } & Sdk;
let sdkLoaded: Promise<Sdk> | undefined;
const loadSdk = (): Promise<Sdk> => {
  sdkLoaded ??= importSdk();
  return sdkLoaded;
};

/**
 * The SDK's timeouts in whole milliseconds, as it demands (it refuses `timeout: 2010.0000000000002`, which
 * `--timeouts attempt=2.01` gave), and at least 1 (0 would end a request before it starts).
 */
const sdkMs = (secs: number) => Math.max(1, Math.round(secs * 1000));

/**
 * A base URL split into what the SDK appends paths to and its query (`?api-version=…`, as Azure's deployment URLs
 * carry), which the SDK must send with every request: appended to the whole URL, `/chat/completions` would land
 * inside the query.
 */
export function splitBaseUrl(baseUrl: string): { base: string; query: Record<string, string> | undefined } {
  const at = baseUrl.indexOf("?");
  if (at === -1) return { base: baseUrl, query: undefined };
  const params = new URLSearchParams(baseUrl.slice(at + 1).replace(/#.*$/, ""));
  const query = Object.fromEntries(params);
  return { base: baseUrl.slice(0, at), query: Object.keys(query).length > 0 ? query : undefined };
}

/**
 * A signal that aborts `secs` after now, or with `outer`; `fired()` says whether the timer did it. The SDK's
 * `timeout` stops at the response's headers; this bounds the body too.
 */
function deadline(secs: number, outer?: AbortSignal) {
  const controller = new AbortController();
  let fired = false;
  const onOuter = () => controller.abort();
  if (outer?.aborted) controller.abort();
  else outer?.addEventListener("abort", onOuter, { once: true });
  const timer = setTimeout(() => {
    fired = true;
    controller.abort();
  }, secs * 1000);
  return {
    signal: controller.signal,
    fired: () => fired,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

/** The variable an endpoint's API key is read from when the settings name none. */
export const DEFAULT_API_KEY_ENV = "OPENAI_API_KEY";

export function apiKeyFrom(env: NodeJS.ProcessEnv, name = DEFAULT_API_KEY_ENV): string | undefined {
  const v = env[name];
  return v && v.length > 0 ? v : undefined;
}

/** One OpenAI-compatible endpoint, called through the `openai` package with its own retries off (see retry.ts). */
export class OpenAICompatibleModel implements ChatModel {
  readonly id: string;
  private client?: Promise<Session>;
  private readonly apiKey: string | undefined;
  private readonly opts: EndpointOptions;
  private readonly shown: string;
  /** The base URL's query (`?api-version=…`) as written after a path in messages; "" when none. */
  private readonly search: string;
  /** What an error message may never repeat: the API key, and the base URL's credentials (password, token, `?key=`). */
  private readonly secrets: readonly (string | undefined)[];
  private readonly timeouts: Timeouts;
  private window: Promise<number | undefined> | undefined;

  constructor(opts: EndpointOptions, env: NodeJS.ProcessEnv = process.env) {
    this.opts = opts;
    // The endpoint as hone writes it (records, trajectories, messages): the base URL's credentials never are.
    const { base, query } = splitBaseUrl(withoutPassword(opts.baseUrl));
    this.shown = base.replace(/\/$/, "");
    this.search = query ? `?${new URLSearchParams(query)}` : "";
    this.id = `${withoutPassword(opts.baseUrl)}#${opts.model}`;
    this.apiKey = apiKeyFrom(env, opts.apiKeyEnv);
    this.secrets = [this.apiKey, ...urlSecrets(opts.baseUrl)];
    this.timeouts = resolveTimeouts(opts.timeouts);
  }

  private sdk(): Promise<Session> {
    const { base, query } = splitBaseUrl(this.opts.baseUrl);
    this.client ??= loadSdk().then((loaded) => ({
      ...loaded,
      client: new loaded.sdk({
        apiKey: this.apiKey ?? NO_KEY,
        baseURL: base,
        defaultQuery: query,
        // Azure OpenAI's deployment URLs (the ones that carry api-version) take the key in `api-key` alone, as the
        // SDK's AzureOpenAI sends it: Azure refuses a request that also carries a bearer header (null: not sent).
        defaultHeaders:
          query?.["api-version"] !== undefined && this.apiKey ? { "api-key": this.apiKey, Authorization: null } : undefined,
        maxRetries: 0,
        timeout: sdkMs(this.timeouts.attempt),
        fetch: nodeFetchWith({ connectTimeoutMs: this.timeouts.connect * 1000 }),
      }),
    }));
    return this.client;
  }

  get dialect(): Dialect {
    return this.opts.dialect ?? "vllm";
  }

  private streams(request: ChatRequest): boolean {
    return this.opts.stream ?? request.sampling?.stream ?? false;
  }

  /** The exact body sent for a request; cache keys hash it. */
  wireBody(request: ChatRequest): Record<string, unknown> {
    return buildRequestBody(request, {
      dialect: this.dialect,
      model: this.opts.model,
      keepSampling: this.opts.keepSampling,
      stream: this.streams(request),
    });
  }

  async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResponse> {
    const body = this.wireBody(request);
    const sdk = await this.sdk();
    const window = await this.contextWindow();
    const started = performance.now();
    try {
      const res = this.streams(request)
        ? await this.streamed(sdk, body, started, signal)
        : await this.whole(sdk, body, started, signal);
      return window === undefined ? res : { ...res, context_window: window };
    } catch (err) {
      throw sdk.toModelError(err, this.chatUrl, this.opts.model, this.secrets, { dialect: this.dialect, key: this.keySource });
    }
  }

  /**
   * A whole call, bounded by `attempt` to its last byte: the SDK's own timeout ends with the headers, and a server
   * that answers with an event stream anyway (a proxy that always streams) would otherwise hold the body forever.
   */
  private async whole(s: Session, body: Record<string, unknown>, started: number, signal?: AbortSignal): Promise<ChatResponse> {
    const { client, sdk } = s;
    const limit = deadline(this.timeouts.attempt, signal);
    try {
      // The body may carry vLLM fields the SDK's types do not know; the SDK sends the object as given.
      const raw = await client.chat.completions.create(body as unknown as CreateParams, { signal: limit.signal });
      return parseCompletion(raw as unknown as RawCompletion, this.chatUrl, this.opts.model, performance.now() - started);
    } catch (err) {
      if (limit.fired() || err instanceof sdk.APIConnectionTimeoutError)
        throw new ClientTimeout(`no complete answer within the attempt timeout of ${this.timeouts.attempt} s`);
      if (signal?.aborted && !(err instanceof sdk.APIUserAbortError)) throw new sdk.APIUserAbortError();
      throw err;
    } finally {
      limit.dispose();
    }
  }

  /**
   * A streamed call: the first chunk within `first_byte`, each next one within `idle`, all of it within `attempt`.
   * The SDK ends an aborted stream quietly, so which timer fired is kept here and turned into the fault.
   */
  private async streamed(
    s: Session,
    body: Record<string, unknown>,
    started: number,
    signal?: AbortSignal,
  ): Promise<ChatResponse> {
    const { client, sdk } = s;
    const t = this.timeouts;
    const controller = new AbortController();
    let fired: string | undefined;
    const fire = (what: string) => {
      fired ??= what;
      controller.abort();
    };
    const onOuter = () => controller.abort();
    signal?.addEventListener("abort", onOuter, { once: true });
    const attempt = setTimeout(() => fire(`no complete answer within the attempt timeout of ${t.attempt} s`), t.attempt * 1000);
    let gap: NodeJS.Timeout | undefined;
    const arm = (secs: number, what: string) => {
      clearTimeout(gap);
      gap = setTimeout(() => fire(what), secs * 1000);
    };
    const firstByte = `no token within the first-byte timeout of ${t.first_byte} s`;
    try {
      arm(t.first_byte, firstByte);
      const { data: stream, response } = await client.chat.completions
        .create(body as unknown as StreamParams, { signal: controller.signal, timeout: sdkMs(t.first_byte) })
        .withResponse();
      // A server that ignores `stream: true` (some gateways, with tools) answers with one whole completion.
      if (streamSawDone(response) === undefined) {
        const raw = (await response.json()) as RawCompletion;
        return parseCompletion(raw, this.chatUrl, this.opts.model, performance.now() - started);
      }
      const acc = new StreamAccumulator(this.chatUrl, this.opts.model);
      for await (const chunk of stream) {
        arm(t.idle, `no token for ${t.idle} s (the idle timeout) in the middle of a streamed answer`);
        acc.add(chunk as unknown as RawChunk);
      }
      if (fired) throw new ClientTimeout(fired);
      if (signal?.aborted) throw new sdk.APIUserAbortError();
      return acc.result(performance.now() - started, streamSawDone(response) ?? false);
    } catch (err) {
      if (fired) throw new ClientTimeout(fired);
      if (err instanceof sdk.APIConnectionTimeoutError) throw new ClientTimeout(firstByte);
      throw err;
    } finally {
      clearTimeout(attempt);
      clearTimeout(gap);
      signal?.removeEventListener("abort", onOuter);
    }
  }

  /**
   * The model's context window where the endpoint says it (vLLM's `max_model_len` in /v1/models), asked once per
   * client; undefined when the endpoint does not say or cannot be asked.
   */
  contextWindow(): Promise<number | undefined> {
    this.window ??= this.listModelCards()
      .then((cards) => {
        const card = cards.find((c) => c.id === this.opts.model);
        const n = card?.max_model_len;
        return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined;
      })
      .catch(() => undefined);
    return this.window;
  }

  async listModels(): Promise<string[]> {
    return (await this.listModelCards()).map((c) => c.id);
  }

  /** The model list, all of it within `connect + first_byte` (every call waits for it once, for the window). */
  private async listModelCards(): Promise<{ id: string; max_model_len?: unknown }[]> {
    const { client, toModelError } = await this.sdk();
    const secs = this.timeouts.connect + this.timeouts.first_byte;
    const limit = deadline(secs);
    try {
      const page = await client.models.list({ timeout: sdkMs(secs), signal: limit.signal });
      const cards: { id: string; max_model_len?: unknown }[] = [];
      for await (const m of page) cards.push(m as { id: string; max_model_len?: unknown });
      return cards;
    } catch (err) {
      const cause = limit.fired() ? new ClientTimeout(`no complete model list within ${secs} s`) : err;
      throw toModelError(cause, `${this.shown}/models${this.search}`, this.opts.model, this.secrets, { key: this.keySource });
    } finally {
      limit.dispose();
    }
  }

  /** The variable the key is read from (its name, never its value) and whether it held one. */
  private get keySource(): { env: string; set: boolean } {
    return { env: this.opts.apiKeyEnv ?? DEFAULT_API_KEY_ENV, set: this.apiKey !== undefined };
  }

  private get chatUrl(): string {
    return `${this.shown}/chat/completions${this.search}`;
  }
}
