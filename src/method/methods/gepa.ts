import * as z from "zod";
import { seedFrom } from "../../model/offline/rng.ts";
import { rng } from "../../rng.ts";
import type { Archive, Candidate, KeepDecision, Method, Proposal, ProposeContext } from "../method.ts";
import {
  acceptMinibatch,
  allPerfect,
  currentBestParent,
  epochOrder,
  epsilonGreedyParent,
  minibatchAt,
  roundRobinComponent,
  selectParetoParent,
  topKParetoParent,
} from "../rules/gepa.ts";
import { acceptMerge, mergeDue } from "../rules/gepa-merge.ts";
import { sum } from "../rules/sample.ts";
import { checkedSpec, componentSpec, componentTexts } from "./reflective/components.ts";
import { reflectiveRecords } from "./reflective/evidence.ts";
import { replyText } from "./reflective/fenced.ts";
import { mergeProposal } from "./reflective/gepa-merge-step.ts";
import {
  frontierIds,
  type GepaMemo,
  gepaMemo,
  gepaPool,
  orientedScores,
  type Pool,
  pointersAt,
  scheduleAt,
  trainKeys,
} from "./reflective/gepa-pool.ts";
import { gepaMessages } from "./reflective/gepa-prompt.ts";

const params = z
  .object({
    candidate_selection: z.enum(["pareto", "current_best", "epsilon_greedy", "top_k_pareto"]).default("pareto"),
    minibatch_size: z.number().int().min(1).max(64).default(3),
    acceptance: z.enum(["strict", "improvement_or_equal"]).default("strict"),
    skip_perfect_score: z.boolean().default(true),
    /** GEPA's default is 1 (accuracy); hone applies it to QA tasks only unless given, since a discovery score has no top. */
    perfect_score: z.number().optional(),
    use_merge: z.boolean().default(false),
    max_merge_invocations: z.number().int().min(0).max(100).default(5),
    merge_val_overlap_floor: z.number().int().min(1).max(10_000).default(5),
    max_tokens: z.number().int().min(256).max(32_768).default(4096),
  })
  .strict();

type Params = z.infer<typeof params>;

function selectParent(pool: Pool, p: Params, rand: () => number): number {
  const pick =
    p.candidate_selection === "current_best"
      ? currentBestParent(pool.aggregates)
      : p.candidate_selection === "epsilon_greedy"
        ? epsilonGreedyParent(pool.aggregates, 0.1, rand)
        : p.candidate_selection === "top_k_pareto"
          ? topKParetoParent(pool.front, pool.aggregates, 5, rand)
          : selectParetoParent(pool.front, pool.aggregates, rand);
  return pick ?? currentBestParent(pool.aggregates) ?? 0;
}

/**
 * The epoch's shuffled, padded order of the train keys (EpochShuffledBatchSampler): the epoch is iteration·size over the
 * padded length, and each epoch is shuffled by its own seeded generator (GEPA draws every epoch from one generator).
 */
function epochMinibatchOrder(taskId: string, train: string[], iteration: number, size: number): string[] {
  if (train.length === 0) return [];
  const padded = Math.ceil(train.length / size) * size;
  const epoch = Math.floor((iteration * size) / padded);
  return epochOrder(train, size, rng(seedFrom("gepa-epoch", taskId, epoch)));
}

interface Slot {
  parent: number;
  component: string;
  minibatch: string[];
  before: (number | null)[];
}

/** GEPA's reflective step with IndependentSampling(k): k parents drawn from the frontier, one component each. */
async function reflective(ctx: ProposeContext<Params>, pool: Pool): Promise<Proposal[]> {
  const p = ctx.params;
  const components = Object.keys(componentTexts(ctx.files("r00-seed")));
  if (components.length === 0) return [];
  const perfect = p.perfect_score ?? (ctx.task.kind === "qa" ? 1 : undefined);
  const pointers = pointersAt(ctx.archive, pool, ctx.round);
  const train = trainKeys(pool);
  const iteration = ctx.round - 1;
  const order = epochMinibatchOrder(ctx.task.id, train, iteration, p.minibatch_size);
  const slots: Slot[] = [];
  for (let s = 0; s < ctx.k; s++) {
    const parent = selectParent(pool, p, ctx.rng);
    const minibatch = order.length ? minibatchAt(order, iteration + s, p.minibatch_size).ids : [];
    const raw = minibatch.map((k) => (pool.members[parent]?.measured?.perTask[k] ?? null) as number | null);
    if (p.skip_perfect_score && perfect !== undefined && raw.length && allPerfect(raw, perfect)) continue;
    const { name, next } = roundRobinComponent(pointers[parent] ?? 0, components);
    pointers[parent] = next;
    slots.push({ parent, component: name, minibatch, before: minibatch.map((k) => pool.scores[parent]?.[k] ?? null) });
  }
  const schedule = scheduleAt(ctx.archive, ctx.round, p.max_merge_invocations);
  const frontier = frontierIds(pool);
  return Promise.all(
    slots.map(async (slot, s) => {
      const parent = pool.members[slot.parent] as Candidate;
      const current = componentTexts(ctx.files(parent.id))[slot.component] ?? "";
      const messages = gepaMessages(slot.component, current, reflectiveRecords(parent, ctx.task, p.minibatch_size));
      const reply = await ctx.proposer.complete(messages, { maxTokens: p.max_tokens, sample: s });
      const { spec, problem } = checkedSpec(componentSpec({ [slot.component]: replyText(reply.text, slot.component) }));
      const gepa: GepaMemo = {
        kind: "reflective",
        iteration,
        pointer: pointers[slot.parent] ?? 0,
        component: slot.component,
        minibatch: slot.minibatch,
        before: slot.before,
        schedule,
        frontier,
      };
      return {
        parents: [parent.id],
        spec,
        rationale: problem
          ? `GEPA reflection's rewrite of ${slot.component} refused before the gate: ${problem}`
          : `GEPA reflective rewrite of ${slot.component} from ${parent.id}'s traces and feedback`,
        sample: { messages, completion: reply.text },
        state: { gepa },
      };
    }),
  );
}

const fmt = (xs: readonly (number | null)[]) => `[${xs.map((x) => (x === null ? "none" : String(x))).join(", ")}]`;

function keepReflective(archive: Archive, c: Candidate, g: GepaMemo, p: Params): KeepDecision {
  const parent = archive.candidates.find((x) => x.id === c.parents[0]);
  const mine = orientedScores(c, archive);
  const theirs = parent ? orientedScores(parent, archive) : {};
  const keys = g.minibatch ?? [];
  const before = g.before ?? keys.map((k) => theirs[k] ?? null);
  const after = keys.map((k) => mine[k] ?? null);
  const rule = `gepa_minibatch_${p.acceptance}`;
  if (keys.length === 0 || after.some((x) => x === null))
    return { keep: false, rule, reason: `not scored on every minibatch key ${fmt(after)}` };
  const keep = acceptMinibatch(
    before.map((x) => x ?? Number.NEGATIVE_INFINITY),
    after as number[],
    p.acceptance,
  );
  return {
    keep,
    rule,
    reason: `minibatch ${keys.join(", ")}: Σ ${sum(after as number[])} ${keep ? "beats" : "does not beat"} the parent's Σ ${sum(before.map((x) => x ?? Number.NEGATIVE_INFINITY))} (${c.parents[0]}); scores oriented to higher-is-better`,
  };
}

function keepMerge(archive: Archive, c: Candidate, g: GepaMemo): KeepDecision {
  const m = g.merge as NonNullable<GepaMemo["merge"]>;
  const mine = orientedScores(c, archive);
  const after = m.subsample.map((k) => mine[k]);
  if (after.some((x) => x === undefined))
    return { keep: false, rule: "gepa_merge_subsample", reason: "not scored on every subsample key" };
  const keep = acceptMerge(m.before, after as number[]);
  return {
    keep,
    rule: "gepa_merge_subsample",
    reason: `subsample ${m.subsample.join(", ")}: Σ ${sum(after as number[])} ${keep ? "reaches" : "is below"} max(${m.before.join(", ")}) of ${m.i} and ${m.j}`,
  };
}

/**
 * GEPA (Agrawal et al., arXiv 2507.19457; gepa-ai/gepa b265bf9). A round is one GEPA iteration: when a merge is due
 * (use_merge, a new candidate found last round, merges_due > 0) it proposes one merge of two frontier candidates;
 * otherwise k reflective proposals (GEPA's IndependentSampling): each parent drawn ∝ the keys it wins on the per-key
 * Pareto frontier of the accepted pool, its next component by round robin (system prompt, skill bodies, tool
 * descriptions) rewritten by the reflection model from the parent's trajectory and evaluator feedback. Keep: the
 * minibatch test (Σ child > Σ parent on the minibatch keys; merges Σ ≥ max of both parents on their subsample);
 * kept candidates join the pool and the frontier. Keys are `measured.perTask`: on a single discovery task that is
 * the task, so the minibatch is that task (padded, as GEPA pads) and the full evaluation is the same rollout.
 */
export const gepa: Method<Params> = {
  name: "gepa",
  summary:
    "GEPA: parent ∝ keys won on the per-task Pareto frontier, reflective rewrite of one component (round robin), minibatch acceptance, optional merge",
  edits: "spec",
  params,
  derivedDefaults: {
    perfect_score: { rule: "1 on QA", words: "1 on a QA benchmark (accuracy); none on a discovery task, whose score has no top" },
  },
  startFrom: "seed",
  async propose(ctx) {
    const pool = gepaPool(ctx.archive);
    if (pool.members.length === 0) return [];
    const schedule = scheduleAt(ctx.archive, ctx.round, ctx.params.max_merge_invocations);
    if (ctx.params.use_merge && mergeDue(schedule)) {
      const merge = mergeProposal(ctx, pool, schedule);
      if (merge) return [merge];
    }
    return reflective(ctx, pool);
  },
  keep(archive, candidate, p) {
    if (candidate.id === "r00-seed") return { keep: true, rule: "seed", reason: "the seed candidate starts GEPA's pool" };
    const g = gepaMemo(candidate);
    if (!g) return { keep: false, rule: "gepa_no_state", reason: "no GEPA record for this candidate" };
    return g.kind === "merge" && g.merge ? keepMerge(archive, candidate, g) : keepReflective(archive, candidate, g, p);
  },
  choose(archive) {
    const pool = gepaPool(archive);
    let best = 0;
    pool.aggregates.forEach((a, i) => {
      if (a > (pool.aggregates[best] as number)) best = i;
    });
    return pool.members[best];
  },
};
