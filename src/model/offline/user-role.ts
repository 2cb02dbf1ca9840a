import type { ChatRequest } from "../types.ts";
import { registerOfflineRole } from "./policy.ts";

/**
 * The offline model as τ-bench's simulated user. It does not understand the agent: it reads the instruction out of
 * its system prompt, says it one sentence a turn in the first person (by swapping "you" for "I", nothing cleverer),
 * and says the stop token once the sentences run out or after six turns.
 */
const MARK = "You are a user interacting with an agent.";
const MAX_TURNS = 6;

export function firstPerson(sentence: string): string {
  return sentence
    .replace(/\bYou are\b/g, "I am")
    .replace(/\byou are\b/g, "I am")
    .replace(/\bYour\b/g, "My")
    .replace(/\byour\b/g, "my")
    .replace(/\bYou\b/g, "I")
    .replace(/\byou\b/g, "me");
}

export function instructionSentences(system: string): string[] {
  const m = /Instruction: ([\s\S]*?)\nRules:/.exec(system);
  return (m?.[1] ?? "")
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

registerOfflineRole({
  name: "simulated-user",
  claims: (r: ChatRequest) =>
    (r.tools ?? []).length === 0 && r.messages[0]?.role === "system" && r.messages[0].content.startsWith(MARK),
  reply: (r) => {
    const sentences = instructionSentences(r.messages[0]?.content ?? "");
    const turn = r.messages.filter((m) => m.role === "assistant").length;
    const said = turn < Math.min(sentences.length, MAX_TURNS) ? firstPerson(sentences[turn] as string) : "###STOP###";
    return { content: said, tool_calls: [] };
  },
});
