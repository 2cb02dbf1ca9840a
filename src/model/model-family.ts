/**
 * What hone knows about hosted model families from their names, so the `openai` dialect sends only what a model
 * accepts. A provider prefix (`openai/o3-mini` on OpenRouter) is ignored.
 */
const baseName = (model: string) => (model.toLowerCase().split("/").pop() ?? "").trim();

/**
 * OpenAI's reasoning models: the o-series (o1, o3, o3-mini, o4-mini…) and the gpt-5 family except its chat variants.
 * They refuse temperature, top_p, presence/frequency penalties and max_tokens, and take reasoning_effort.
 */
export function isOpenAIReasoningModel(model: string): boolean {
  const name = baseName(model);
  if (/^o\d+(?:$|-)/.test(name)) return true;
  return /^gpt-5(?:$|[.-])/.test(name) && !name.includes("-chat");
}

/**
 * OpenAI's o-series refuse `parallel_tool_calls` ("Unsupported parameter: 'parallel_tool_calls' is not supported
 * with this model.", o1, o3-mini, o3, o4-mini); the gpt-5 family takes it.
 */
export function refusesParallelToolCalls(model: string): boolean {
  return /^o\d+(?:$|-)/.test(baseName(model));
}

/** Models known to refuse reasoning_effort: OpenAI's gpt-4 and gpt-3.5 families and gpt-5's chat variants. */
export function isKnownNonReasoningModel(model: string): boolean {
  const name = baseName(model);
  return /^(?:gpt-4|gpt-3\.5|chatgpt-)/.test(name) || (/^gpt-5/.test(name) && name.includes("-chat"));
}
