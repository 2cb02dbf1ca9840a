import * as z from "zod";
import { bestMeasured, type Method } from "../method.ts";
import { keepIfBetter } from "../rules/greedy.ts";
import { randomSpec } from "../rules/random.ts";
import { incumbentOf } from "./greedy.ts";

const params = z.object({}).strict();

/**
 * The random baseline every comparison reports: K valid HarnessSpecs sampled from the spec space with the round's
 * seeded generator (rules/random.ts), each applied to the best kept harness, kept by greedy's rule. No proposer.
 */
export const random: Method<z.infer<typeof params>> = {
  name: "random",
  summary: "K random valid specs per round over the best harness (no proposer): the baseline every comparison reports",
  edits: "spec",
  params,
  startFrom: "incumbent",
  async propose(ctx) {
    const parent = incumbentOf(ctx.archive);
    if (!parent) return [];
    return Array.from({ length: ctx.k }, () => ({ parents: [parent.id], spec: randomSpec(ctx.rng), rationale: "random sample" }));
  },
  keep(archive, candidate) {
    if (candidate.id === "r00-seed") return { keep: true, rule: "seed", reason: "the seed harness" };
    const inc = incumbentOf({ ...archive, candidates: archive.candidates.filter((c) => c.round < candidate.round) });
    const keep = keepIfBetter(candidate.measured?.score, inc?.measured?.score, archive.direction);
    return { keep, rule: "keep_if_better", reason: `${keep ? "beats" : "does not beat"} ${inc?.id ?? "nothing"}` };
  },
  choose: (archive) => bestMeasured(archive, true),
};
