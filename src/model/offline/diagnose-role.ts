import type { ChatRequest } from "../types.ts";
import { registerOfflineRole } from "./policy.ts";
import { rng, seedFrom } from "./rng.ts";

/**
 * The offline model as DGM's diagnosis model (`hone-role: diagnose` in the system message): it answers with the JSON
 * DGM's diagnosis prompts ask for (log_summarization, potential_improvements, improvement_proposal,
 * implementation_suggestion, problem_description), naming one `hone-hint:` setting of the prompt to retune, picked
 * deterministically from the request and its seed. It does not read the log: it does not understand language.
 */
const HINTS = ["step_scale", "literals_per_edit", "min_step"] as const;

export function diagnoseReply(r: ChatRequest): string {
  const user = [...r.messages].reverse().find((m) => m.role === "user")?.content ?? "";
  const next = rng(seedFrom(r.sampling?.seed ?? 0, "diagnose", String(user).length, r.messages.length));
  const hint = HINTS[Math.floor(next() * HINTS.length)] as string;
  const way = next() < 0.5 ? "smaller" : "larger";
  return `\`\`\`json\n${JSON.stringify(
    {
      log_summarization: "The agent edited the program's numbers and evaluated each change within its budget.",
      potential_improvements: [`retune hone-hint: ${hint}`, "state the search strategy in the system prompt"],
      improvement_proposal: `Make the search's ${hint} ${way} so each evaluation moves the program usefully.`,
      implementation_suggestion: `Change the hone-hint: ${hint} line of prompt.md (add it if it is missing).`,
      problem_description: `The agent's ${hint} is poorly tuned for this task; set a ${way} value in prompt.md.`,
    },
    null,
    1,
  )}\n\`\`\``;
}

registerOfflineRole({
  name: "diagnose",
  claims: (r: ChatRequest) => {
    const system = r.messages.find((m) => m.role === "system")?.content ?? "";
    return typeof system === "string" && /hone-role:\s*diagnose\b/.test(system);
  },
  reply: (r: ChatRequest) => ({ content: diagnoseReply(r), tool_calls: [] }),
});
