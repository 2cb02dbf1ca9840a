import * as z from "zod";
import { bestMeasured, type Method } from "../method.ts";
import { defaultMinValid } from "../reward.ts";

const params = z
  .object({
    proposal_gate: z
      .string()
      .regex(/^(off|all|min[1-9][0-9]*)$/, "off, all, or min<N>")
      .optional()
      .describe("fewest valid proposals a round needs (SAH's SAH_PROPOSAL_GATE); default min⌈6K/8⌉"),
    diversity: z.boolean().default(false).describe("give each slot an exploration role of its own (SAH's slot roles)"),
  })
  .strict();

/**
 * HarnessTTT (gray311/Self_Adapt_Harness at bebde8e): K independent proposer samples per round from the incumbent,
 * each rolled out (or, on a QA benchmark, measured on the train split) from the incumbent; a round with fewer valid
 * proposals than the gate's minimum fails; soft-capped rewards and group advantages for the proposer (context or
 * LoRA learning); the incumbent moves only when a candidate clears it beyond the noise. The loop runs its round
 * itself (optimize-proposals.ts, optimize-rewards.ts); this entry gives its name, parameters and final choice.
 */
export const harnessttt: Method<z.infer<typeof params>> = {
  name: "harnessttt",
  summary:
    "test-time harness learning: K independent spec samples from the incumbent, a proposal gate, rewards and advantages, a noise-aware ratchet",
  edits: "spec",
  params,
  derivedDefaults: {
    proposal_gate: {
      rule: "min⌈6K/8⌉",
      words: "at least ⌈6K/8⌉ valid proposals of the round's K (SAH's 6 of 8), else the round fails",
      forK: (k) => `min${defaultMinValid(k)}`,
    },
  },
  startFrom: "incumbent",
  async propose() {
    throw new Error("harnessttt proposes through the optimize round itself");
  },
  keep(_archive, candidate) {
    return { keep: candidate.status === "measured", rule: "ratchet", reason: "the ratchet's decision is recorded in decisions" };
  },
  choose: (archive) => bestMeasured(archive),
};
