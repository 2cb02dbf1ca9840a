import type { ChatModel, ChatRequest, ChatResponse } from "../../src/model/types.ts";

/** An in-process ChatModel that replays scripted tool calls; for loop tests that need no HTTP. */
export function scriptedModel(
  steps: { name: string; arguments: string }[][],
  onRequest?: (r: ChatRequest) => void,
): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  let i = 0;
  return {
    id: "scripted",
    requests,
    async complete(request: ChatRequest): Promise<ChatResponse> {
      requests.push(structuredClone(request));
      onRequest?.(request);
      const step = steps[Math.min(i++, steps.length - 1)] ?? [];
      return {
        message: {
          content: step.length ? null : "done",
          tool_calls: step.map((c, k) => ({ id: `c${i}_${k}`, type: "function" as const, function: c })),
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
