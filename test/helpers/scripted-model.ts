import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";

export interface ScriptOptions {
  /** The id of the k-th call of the n-th answer (1-based n); `c<n>_<k>` unless given. */
  callId?: (n: number, k: number) => string;
  /** Answer after this many milliseconds (a macrotask later, as an endpoint does), then honour an abort. */
  latencyMs?: number;
}

/** An in-process ChatModel that replays scripted tool calls; for loop tests that need no HTTP. */
export function scriptedModel(
  steps: { name: string; arguments: string }[][],
  onRequest?: (r: ChatRequest) => void,
  o: ScriptOptions = {},
): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  let i = 0;
  return {
    id: "scripted",
    requests,
    async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResponse> {
      requests.push(structuredClone(request));
      onRequest?.(request);
      if (o.latencyMs !== undefined) {
        await new Promise((r) => setTimeout(r, o.latencyMs));
        if (signal?.aborted) throw new Error("aborted by the deadline");
      }
      const step = steps[Math.min(i++, steps.length - 1)] ?? [];
      const id = o.callId ?? ((n: number, k: number) => `c${n}_${k}`);
      return {
        message: {
          content: step.length ? null : "done",
          tool_calls: step.map((c, k) => ({ id: id(i, k), type: "function" as const, function: c })),
        },
        finish_reason: step.length ? "tool_calls" : "stop",
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
        latency_ms: 1,
        attempts: 1,
        model: "scripted",
      };
    },
  };
}
