import * as z from "zod";
import type { ChatMessage } from "../../model/types.ts";
import { type Archive, bestMeasured, type Candidate, type Method, type Proposal } from "../method.ts";
import { bestOf, deBest, deDonors, deSelect } from "../rules/evoprompt-de.ts";
import {
  byId,
  childProposal,
  evolve,
  evoParams,
  idsOf,
  initMembers,
  initProposals,
  memberOf,
  membersNamed,
  type PopMember,
  textsOf,
  uniqueIds,
} from "./evoprompt-population.ts";
import { componentLabel, fence } from "./prompt-text.ts";

const params = z
  .object({
    ...evoParams,
    /** The population size (EvoPrompt: 10; 4 here, the least DE can run with: three donors besides p_i). */
    popsize: z.number().int().min(4).max(64).default(4),
    /** Take the third donor at random instead of the best so far (EvoPrompt's donor_random). */
    donor_random: z.boolean().default(false),
  })
  .strict();

type Params = z.infer<typeof params>;

const deChild = (c: Candidate) => c.state?.evo === "de";
const generationOf = (c: Candidate) => Number(c.state?.generation ?? 0);

export interface DePopulation {
  /** The generation being written (1 is the first). */
  generation: number;
  /** Its population p_1 … p_n (donors and targets come from it, as upstream's do from the old population). */
  members: PopMember[];
  /** Slots of this generation whose child was already proposed. */
  done: Set<number>;
  /** The best prompt so far (cur_best_prompt). */
  best: PopMember | undefined;
  filling: boolean;
}

/** The best so far: the initial population's best, then every selection (child or member kept) folded in order. */
function bestSoFar(archive: Archive, init: PopMember[]): PopMember | undefined {
  if (init.length === 0) return undefined;
  let best = bestOf(init) as PopMember;
  for (const c of archive.candidates.filter(deChild)) {
    const child = memberOf(archive, c);
    const target = memberOf(archive, byId(archive, c.state?.target));
    if (child && target) best = deBest(best, deSelect(target, child)) as PopMember;
  }
  return best;
}

/**
 * Where DE stands, rebuilt from the children's states: the generation being written, its population, the slots done,
 * and the best so far. A generation may span rounds (K < popsize); the next population is its members with each
 * replaced by its child where the child scored strictly better, once every slot has its child.
 */
export function dePopulation(archive: Archive, p: Params): DePopulation {
  const init = initMembers(archive, p.popsize);
  const best = bestSoFar(archive, init);
  const kids = archive.candidates.filter(deChild);
  if (kids.length === 0) return { generation: 1, members: init, done: new Set(), best, filling: init.length < p.popsize };
  const g = Math.max(...kids.map(generationOf));
  const ofG = kids.filter((c) => generationOf(c) === g);
  const members = membersNamed(archive, ofG[0]?.state?.population);
  const done = new Set(ofG.map((c) => Number(c.state?.slot)));
  if (done.size < members.length) return { generation: g, members, done, best, filling: false };
  const next = members.map((m, i) => {
    const child = memberOf(
      archive,
      ofG.find((c) => Number(c.state?.slot) === i),
    );
    return child ? (deSelect(m, child) as PopMember) : m;
  });
  return { generation: g + 1, members: next, done: new Set(), best, filling: false };
}

/**
 * The one call of EvoPrompt's DE template: mutate where two donors differ, merge that into the best so far, cross the
 * result over with p_i. The best and p_i come first, so an operator that crosses its first two blocks (the offline
 * model) crosses those two.
 */
export function deMessages(component: string, t: { best: string; current: string; a: string; b: string }): ChatMessage[] {
  const label = componentLabel(component);
  const request = (x: typeof t) =>
    [
      `Follow these steps to write a better ${label}.`,
      "The best prompt so far:",
      fence(component, x.best),
      "The current prompt:",
      fence(component, x.current),
      "Donor 1:",
      fence(component, x.a),
      "Donor 2:",
      fence(component, x.b),
      "1. Find the parts where Donor 1 and Donor 2 differ.",
      "2. Mutate those parts at random.",
      "3. Merge the mutated parts into the best prompt so far, each replacing what it corresponds to.",
      `4. Cross the prompt from step 3 over with the current prompt, and give the final prompt as one block that opens with \`\`\`component ${component} on its own line and closes with \`\`\`.`,
    ].join("\n");
  const demo = {
    best: "Make one change at a time and measure it.",
    current: "Read the task first, then work.",
    a: "Check each result before you go on.",
    b: "Check the score after every edit.",
  };
  return [
    { role: "system", content: "hone-role: crossover\nYou evolve prompts by differential evolution." },
    { role: "user", content: request(demo) },
    {
      role: "assistant",
      content: [
        '1. "each result" vs "the score"; "before you go on" vs "after every edit".',
        '2. "each result" -> "every evaluation"; "after every edit" -> "after each change".',
        "3. Make one change at a time and read every evaluation after each change.",
        `4. ${fence(component, "Read the task first, then make one change at a time and read every evaluation after each change.")}`,
      ].join("\n"),
    },
    { role: "user", content: request(t) },
  ];
}

/**
 * EvoPrompt's differential evolution (Guo et al., beeevita/EvoPrompt): a population of `popsize` versions of one
 * harness text (the seed and variations of it); for each member p_i, three donors from the others, the third the best
 * so far; one call mutates where the first two differ, merges that into the best and crosses it with p_i; the child
 * replaces p_i only when it scores strictly better. Rules: rules/evoprompt-de.ts. K slots per round, in order; the
 * slots of one round are measured together, so they share the best so far at the round's start (upstream updates it
 * after each child), and a later round's slots see every earlier selection.
 */
export const evopromptDe: Method<Params> = {
  name: "evoprompt-de",
  summary: "EvoPrompt DE: per member, donors' differences mutated into the best and crossed with it; replace if better",
  edits: "spec",
  params,
  startFrom: "seed",
  async propose(ctx) {
    const pop = dePopulation(ctx.archive, ctx.params);
    if (pop.filling) return initProposals(ctx, Math.min(ctx.k, ctx.params.popsize - pop.members.length));
    if (!pop.best || pop.members.length < 4) return [];
    const slots = pop.members
      .map((_, i) => i)
      .filter((i) => !pop.done.has(i))
      .slice(0, ctx.k);
    // The best so far may be a child of this generation, not yet in its population: read it too.
    const texts = textsOf(ctx, [...pop.members, pop.best]);
    const textOf = (m: PopMember) => texts.get(m.id) ?? "";
    const out: Proposal[] = [];
    for (const [sample, i] of slots.entries()) {
      const target = pop.members[i] as PopMember;
      const d = deDonors(pop.members, i, pop.best, ctx.rng, ctx.params.donor_random) as Record<"a" | "b" | "c", PopMember>;
      const messages = deMessages(ctx.params.component, {
        best: textOf(d.c),
        current: textOf(target),
        a: textOf(d.a),
        b: textOf(d.b),
      });
      const child = await evolve(ctx, messages, sample);
      out.push(
        childProposal(ctx.params.component, child.text, uniqueIds([target.id, d.c.id, d.a.id, d.b.id]), {
          rationale: `EvoPrompt DE generation ${pop.generation}, member ${i + 1}: donors ${d.a.id}, ${d.b.id}, best ${d.c.id}`,
          sample: { messages, completion: child.completion },
          state: {
            evo: "de",
            generation: pop.generation,
            slot: i,
            population: idsOf(pop.members),
            target: target.id,
            donors: { a: d.a.id, b: d.b.id, c: d.c.id },
          },
        }),
      );
    }
    return out;
  },
  keep(archive, candidate) {
    if (!deChild(candidate)) return { keep: true, rule: "evoprompt_init", reason: "joins the initial population" };
    const child = memberOf(archive, candidate);
    const target = memberOf(archive, byId(archive, candidate.state?.target));
    const keep = !!child && !!target && deSelect(target, child) === child;
    return {
      keep,
      rule: "replace_if_better",
      reason: `${child?.score ?? "no score"} ${keep ? "beats" : "does not beat"} ${target?.score ?? "no score"} of ${target?.id ?? "its member"}`,
    };
  },
  choose(archive, p) {
    const pop = dePopulation(archive, p);
    const best = pop.members.length ? (bestOf(pop.members) as PopMember) : undefined;
    return byId(archive, best?.id) ?? bestMeasured(archive);
  },
};
