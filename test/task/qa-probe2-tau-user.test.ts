import { describe, expect, it } from "vitest";
import { instructionSentences } from "../../src/model/offline/user-role.ts";
import { GREETING, STOP_TOKEN, userSystemPrompt } from "../../src/runtime/conversation.ts";

/**
 * τ-bench's simulated user is a prompt: sierra-research/tau-bench tau_bench/envs/user.py (59a200c),
 * LLMUserSimulationEnv.build_system_prompt, where `instruction_display` is "\n\nInstruction: " + instruction + "\n"
 * and the f-string's own newline follows it, so a blank line separates the instruction from "Rules:".
 */
const upstream = (instruction: string) =>
  `You are a user interacting with an agent.${`\n\nInstruction: ${instruction}\n`}
Rules:
- Just generate one line at a time to simulate the user's message.
- Do not give away all the instruction at once. Only provide the information that is necessary for the current step.
- Do not hallucinate information that is not provided in the instruction. For example, if the agent asks for the order id but it is not mentioned in the instruction, do not make up an order id, just say you do not remember or have it.
- If the instruction goal is satisified, generate '###STOP###' as a standalone message without anything else to end the conversation.
- Do not repeat the exact instruction in the conversation. Instead, use your own words to convey the same information.
- Try to make the conversation as natural as possible, and stick to the personalities in the instruction.`;

describe("τ-bench's simulated user is asked as τ-bench asks it", () => {
  const instruction = "Your name is Yusuf Rossi and your zip code is 19122. You want to return the cleaner.";

  it("the system prompt is user.py's, character for character", () => {
    expect(userSystemPrompt(instruction)).toBe(upstream(instruction));
    expect(userSystemPrompt(instruction)).toContain(`${instruction}\n\nRules:`);
  });

  it("the greeting and stop token are τ-bench's", () => {
    expect(GREETING).toBe("Hi! How can I help you today?");
    expect(STOP_TOKEN).toBe("###STOP###");
  });

  it("the offline user still reads the instruction out of the exact prompt", () => {
    expect(instructionSentences(userSystemPrompt(instruction))).toEqual([
      "Your name is Yusuf Rossi and your zip code is 19122.",
      "You want to return the cleaner.",
    ]);
  });
});
