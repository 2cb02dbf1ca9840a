import * as z from "zod";
import { type Archive, bestMeasured, type Candidate, type Method } from "../method.ts";
import { keepIfBetter } from "../rules/greedy.ts";

const params = z.object({ proposals: z.number().int().min(1).max(16).default(1) }).strict();

/** The best kept candidate so far (the seed until something beats it). */
export function incumbentOf(archive: Archive): Candidate | undefined {
  return bestMeasured(archive, true) ?? archive.candidates.find((c) => c.id === "r00-seed");
}

/**
 * Greedy hill climbing: each round the proposer writes one change (hone's spec proposer) to the best kept harness;
 * it is kept only when its score is strictly better (rules/greedy.ts). The simplest baseline beside `random`.
 */
export const greedy: Method<z.infer<typeof params>> = {
  name: "greedy",
  summary: "one proposal per round over the best harness, kept only when strictly better (the hill-climbing baseline)",
  edits: "spec",
  params,
  startFrom: "incumbent",
  proposalsPerRound: (_k, p) => p.proposals,
  async propose(ctx) {
    const parent = incumbentOf(ctx.archive);
    if (!parent) return [];
    const slots = await ctx.specProposals(parent.id, ctx.params.proposals);
    return slots.filter((s) => s.spec).map((s) => ({ parents: [parent.id], spec: s.spec, sample: s.sample }));
  },
  keep(archive, candidate) {
    if (candidate.id === "r00-seed") return { keep: true, rule: "seed", reason: "the seed harness" };
    const inc = incumbentOf({ ...archive, candidates: archive.candidates.filter((c) => c.round < candidate.round) });
    const keep = keepIfBetter(candidate.measured?.score, inc?.measured?.score, archive.direction);
    return {
      keep,
      rule: "keep_if_better",
      reason: `${candidate.measured?.score ?? "no score"} ${keep ? "beats" : "does not beat"} ${inc?.measured?.score ?? "no score"} (${inc?.id ?? "none"})`,
    };
  },
  choose: (archive) => bestMeasured(archive, true),
};
