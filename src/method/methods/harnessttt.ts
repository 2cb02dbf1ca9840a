import { z } from "zod";
import { bestMeasured, type Method } from "../method.ts";

const params = z.object({}).strict();

/**
 * HarnessTTT (gray311/Self_Adapt_Harness): K proposals per round from the incumbent, each rolled out from the
 * incumbent program; gap-normalised, soft-capped rewards and group advantages for the proposer (context or LoRA
 * learning); the best program and its harness carry forward only when they clear the incumbent beyond the noise.
 * The loop runs its round itself (optimize-rounds.ts: propose, rewards, LoRA); this entry gives its name, parameters
 * and final choice to the registry and the console.
 */
export const harnessttt: Method<z.infer<typeof params>> = {
  name: "harnessttt",
  summary: "test-time harness learning: K spec proposals from the incumbent, rewards and advantages, a noise-aware ratchet",
  edits: "spec",
  params,
  startFrom: "incumbent",
  async propose() {
    throw new Error("harnessttt proposes through the optimize round itself");
  },
  keep(_archive, candidate) {
    return { keep: candidate.status === "measured", rule: "ratchet", reason: "the ratchet's decision is recorded in decisions" };
  },
  choose: (archive) => bestMeasured(archive),
};
