import type { ChatMessage } from "../../../model/types.ts";
import { renderRecords } from "./evidence.ts";
import { fence } from "./fenced.ts";

/**
 * GEPA's reflection prompt (InstructionProposalSignature in gepa-ai/gepa b265bf9, strategies/instruction_proposal.py),
 * in hone's own words: the current text of one component, the reflective dataset (each example's inputs, what the
 * agent did, feedback), and the request to write a better text carrying every task-specific fact and any strategy
 * that generalises. The component travels as a ```component <name>``` block; `hone-role: rewrite` lets the offline
 * model answer it.
 */
export function gepaMessages(component: string, current: string, records: readonly Record<string, string>[]): ChatMessage[] {
  const user = [
    `I gave an assistant the following text (the \`${component}\` of its harness) to carry out a task for me:`,
    "",
    fence(component, current),
    "",
    "Below are examples of the task inputs the assistant was given, what it did with this text, and feedback on how its work could be better:",
    "",
    renderRecords(records),
    "",
    "Your task is to write a new version of this text for the assistant.",
    "",
    "Read the inputs carefully, work out their format, and infer a detailed description of the task I want the assistant to solve.",
    "",
    "Read everything the assistant did and the feedback on it. Find every niche or domain-specific fact about the task and put it in the new text, since the assistant may not have that information later. If the assistant used a strategy that generalises, write that strategy into the text as well.",
    "",
    "Reply with the new text only, inside one fenced block opened exactly like the block above (three backticks, the word component, the same name).",
  ].join("\n");
  return [
    {
      role: "system",
      content:
        "hone-role: rewrite\nYou improve one text component of an AI agent's harness from evidence of how the agent did with it.",
    },
    { role: "user", content: user },
  ];
}
