import { createHash } from "node:crypto";
import type { ToolCall } from "../model/types.ts";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Nine alphanumeric characters: the one id form every server accepts (Mistral's templates demand exactly it). */
export function generatedCallId(iteration: number, index: number, salt: number): string {
  const bytes = createHash("sha256").update(`hone-tool-call:${iteration}:${index}:${salt}`).digest();
  let id = "";
  for (let i = 0; i < 9; i++) id += ALPHABET[(bytes[i] as number) % ALPHABET.length];
  return id;
}

/**
 * Tool calls as they go into the conversation: ids exactly as the server sent them; a call without one, or with the
 * id of an earlier call in the same message (its tool result could not be told from the other's, and OpenAI refuses
 * the next request), gets a generated id, deterministic (so cached and replayed conversations are identical) and
 * unused in the conversation.
 */
export function withCallIds(calls: readonly ToolCall[], iteration: number, used: Set<string>): ToolCall[] {
  const inMessage = new Set<string>();
  return calls.map((c, index) => {
    if (c.id && !inMessage.has(c.id)) {
      inMessage.add(c.id);
      used.add(c.id);
      return c;
    }
    let salt = 0;
    let id = generatedCallId(iteration, index, salt);
    while (used.has(id)) id = generatedCallId(iteration, index, ++salt);
    used.add(id);
    inMessage.add(id);
    return { ...c, id };
  });
}
