import { builtinMiddlewareParams, type ContextBudgetParams } from "../harness/middleware-params.ts";
import type { ModelError } from "../model/errors.ts";
import type { ChatMessage, ChatResponse } from "../model/types.ts";
import { type Compaction, charsOf, compact } from "./context-fit.ts";

/** Before the server has said how it counts, assume 3 characters a token (code and JSON; prose is nearer 4). */
const DEFAULT_TOKENS_PER_CHAR = 1 / 3;
/** A compaction goes this far below the limit, so it happens now and then rather than before every call. */
const COMPACT_TO = 0.7;
/** After a refusal without a stated window, aim at this share of the refused prompt. */
const AFTER_REFUSAL = 0.5;

export const defaultContextBudget = (): ContextBudgetParams => builtinMiddlewareParams.context_budget.parse({});

export type CompactionTrigger = "budget" | "context_error";

/** What a compaction event records in the trajectory. */
export interface CompactionRecord {
  trigger: CompactionTrigger;
  window: number | null;
  limit_tokens: number | null;
  tokens_before: number;
  tokens_after: number;
  outputs_compacted: number;
  reasoning_dropped: number;
  turns_dropped: number;
  strategy: ContextBudgetParams["strategy"];
}

/**
 * The agent loop's view of the context window for one rollout: the window (the smallest of what the harness, the
 * endpoint and a refusal said), how the server counts (its prompt_tokens over the characters sent), and when to
 * compact. Everything it learns comes from responses and errors, which the request cache records, so a replay
 * compacts exactly where the run did.
 */
export class ContextKeeper {
  private window: number | undefined;
  private tokensPerChar = DEFAULT_TOKENS_PER_CHAR;

  constructor(
    private readonly params: ContextBudgetParams,
    /** Tokens the answer may take (the harness's max_tokens); vLLM refuses prompt + max_tokens past the window. */
    private readonly reserve: number,
    /** Characters sent besides the messages (tool definitions). */
    private readonly extraChars: number,
  ) {
    this.window = params.context_window;
  }

  private learnWindow(n: number | undefined): void {
    if (n !== undefined && n > 0) this.window = this.window === undefined ? n : Math.min(this.window, n);
  }

  private calibrate(tokens: number | undefined, messages: readonly ChatMessage[]): void {
    const chars = charsOf(messages) + this.extraChars;
    if (tokens && tokens > 0 && chars > 0) this.tokensPerChar = Math.min(2, Math.max(0.05, tokens / chars));
  }

  /** The prompt size past which the conversation is compacted, when the window is known. */
  limit(): number | undefined {
    if (this.window === undefined) return undefined;
    return Math.floor(Math.max(0, this.window - this.reserve) * this.params.fill_ratio);
  }

  /** After a successful call: the window the response reports and the server's count of the prompt just sent. */
  observe(response: ChatResponse, sent: readonly ChatMessage[]): void {
    this.learnWindow(response.context_window);
    this.calibrate(response.usage.prompt_tokens, sent);
  }

  /** Before a call: a shorter conversation when the estimate passes the limit (hone:context_budget only). */
  beforeCall(messages: readonly ChatMessage[]): { compaction: Compaction; record: CompactionRecord } | undefined {
    const limit = this.limit();
    if (limit === undefined || this.estimate(messages) <= limit) return undefined;
    return this.run(messages, "budget", Math.floor(limit * COMPACT_TO), false);
  }

  /** After the server refused the prompt as too long: learn what it said, then compact harder. */
  afterRefusal(err: ModelError, messages: readonly ChatMessage[]) {
    this.learnWindow(err.contextWindow);
    if (err.promptTokens) this.calibrate(err.promptTokens, messages);
    const limit = this.limit();
    const target = limit !== undefined ? Math.floor(limit * COMPACT_TO) : Math.floor(this.estimate(messages) * AFTER_REFUSAL);
    return this.run(messages, "context_error", target, true);
  }

  private estimate(messages: readonly ChatMessage[]): number {
    return Math.ceil((charsOf(messages) + this.extraChars) * this.tokensPerChar);
  }

  private run(messages: readonly ChatMessage[], trigger: CompactionTrigger, target: number, aggressive: boolean) {
    const c = compact(messages, {
      params: this.params,
      tokensPerChar: this.tokensPerChar,
      extraChars: this.extraChars,
      targetTokens: target,
      aggressive,
    });
    if (!c) return undefined;
    const record: CompactionRecord = {
      trigger,
      window: this.window ?? null,
      limit_tokens: this.limit() ?? null,
      tokens_before: c.tokensBefore,
      tokens_after: c.tokensAfter,
      outputs_compacted: c.outputsCompacted,
      reasoning_dropped: c.reasoningDropped,
      turns_dropped: c.turnsDropped,
      strategy: this.params.strategy,
    };
    return { compaction: c, record };
  }
}
