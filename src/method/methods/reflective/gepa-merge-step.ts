import type { Proposal, ProposeContext } from "../../method.ts";
import type { MergeSchedule } from "../../rules/gepa-merge.ts";
import { mergeCandidates, mergeSubsample, proposeMerge } from "../../rules/gepa-merge.ts";
import { sum } from "../../rules/sample.ts";
import { checkedSpec, componentSpec, componentTexts } from "./components.ts";
import { frontierIds, type GepaMemo, mergeLogOf, type Pool, pointersAt, poolParents } from "./gepa-pool.ts";

export interface MergeParams {
  merge_val_overlap_floor: number;
}

/**
 * GEPA's merge step (proposer/merge.py): two frontier candidates with a common ancestor, combined component by
 * component (gepa-merge.ts), as a spec over the first of them; the subsample it is judged on (5 common keys drawn
 * from where each parent wins and where they tie) and both parents' sums there are recorded for the keep rule
 * (Σ new ≥ max(Σ i, Σ j)). No model call. Undefined when no pair can merge, so the round runs GEPA's reflective step
 * instead. A merge identical to its first parent is not proposed (hone refuses a spec equal to its base).
 */
export function mergeProposal<P extends MergeParams>(
  ctx: ProposeContext<P>,
  pool: Pool,
  schedule: MergeSchedule,
): Proposal | undefined {
  const programs = pool.members.map((c) => componentTexts(ctx.files(c.id)));
  const log = mergeLogOf(ctx.archive, pool);
  const m = proposeMerge(
    {
      aggregates: pool.aggregates,
      candidates: mergeCandidates(pool.front, pool.aggregates),
      programs,
      parents: poolParents(pool),
      scores: pool.scores,
      valOverlapFloor: ctx.params.merge_val_overlap_floor,
    },
    log,
    ctx.rng,
  );
  if (!m) return undefined;
  const sources = log.descriptions.at(-1)?.[2] ?? [];
  const first = programs[m.i] ?? {};
  const changes = Object.fromEntries(Object.entries(m.program).filter(([name, text]) => first[name] !== text));
  if (Object.keys(changes).length === 0) return undefined;
  const [si, sj] = [pool.scores[m.i] ?? {}, pool.scores[m.j] ?? {}];
  const subsample = mergeSubsample(si, sj, ctx.rng);
  if (subsample.length === 0) return undefined;
  const id = (x: number) => pool.members[x]?.id as string;
  const pointers = pointersAt(ctx.archive, pool, ctx.round);
  const gepa: GepaMemo = {
    kind: "merge",
    iteration: ctx.round - 1,
    pointer: Math.max(pointers[m.i] ?? 0, pointers[m.j] ?? 0),
    merge: {
      i: id(m.i),
      j: id(m.j),
      ancestor: id(m.ancestor),
      sources: sources.map(id),
      subsample,
      before: [sum(subsample.map((k) => si[k] ?? 0)), sum(subsample.map((k) => sj[k] ?? 0))],
    },
    schedule,
    frontier: frontierIds(pool),
  };
  const { spec, problem } = checkedSpec(componentSpec(changes));
  return {
    parents: [id(m.i), id(m.j)],
    spec,
    rationale: problem
      ? `GEPA merge refused before the gate: ${problem}`
      : `GEPA merge of ${id(m.i)} and ${id(m.j)} over their common ancestor ${id(m.ancestor)}: ${Object.keys(changes).join(", ")} from the side that changed`,
    state: { gepa },
  };
}
