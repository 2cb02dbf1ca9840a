import * as z from "zod";
import type { ChatMessage } from "../../model/types.ts";
import { type Archive, bestMeasured, type Candidate, type Method, type Proposal } from "../method.ts";
import { gaParentPairs, gaSurvivors } from "../rules/evoprompt-ga.ts";
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
    /** How parents are drawn (EvoPrompt's sel_mode): roulette wheel ∝ fitness, uniform, or 2-way tournaments. */
    selection: z.enum(["wheel", "random", "tour"]).default("wheel"),
    /** Who survives (ga_mode): the best popsize of parents ∪ children, or child j replacing member j. */
    survival: z.enum(["topk", "std"]).default("topk"),
  })
  .strict();

type Params = z.infer<typeof params>;

const gaChild = (c: Candidate) => c.state?.evo === "ga";
const generationOf = (c: Candidate) => Number(c.state?.generation ?? 0);

/** The population after generation `g`: survival over the population its children were bred from and them. */
function survivorsOf(archive: Archive, g: number, p: Params): PopMember[] {
  const kids = archive.candidates.filter((c) => gaChild(c) && generationOf(c) === g);
  const parents = membersNamed(archive, kids[0]?.state?.population);
  const children: PopMember[] = [];
  for (const k of kids) {
    const m = memberOf(archive, k);
    if (m) children[Number(k.state?.slot ?? children.length)] = m;
  }
  if (p.survival === "std") return gaSurvivors(parents, children, "std", p.popsize) as PopMember[];
  const dense = children.filter((m) => !!m);
  // gaSurvivors keeps one entry per text with the later (child's) score: map each back to that later member.
  const byText = new Map<string, PopMember>();
  for (const m of [...parents, ...dense]) byText.set(m.text, m);
  return gaSurvivors(parents, dense, "topk", p.popsize).map((s) => byText.get(s.text) as PopMember);
}

/**
 * The current population and its generation number (0: the initial one), rebuilt from the members each child's
 * state records; `filling` while the initial population still lacks measured members.
 */
export function gaPopulation(archive: Archive, p: Params): { generation: number; members: PopMember[]; filling: boolean } {
  const last = Math.max(0, ...archive.candidates.filter(gaChild).map(generationOf));
  if (last > 0) return { generation: last, members: survivorsOf(archive, last, p), filling: false };
  const members = initMembers(archive, p.popsize);
  return { generation: 0, members, filling: members.length < p.popsize };
}

/** The one call that crosses two parents over and then mutates the result (EvoPrompt's GA template, one shot). */
export function gaMessages(component: string, a: string, b: string): ChatMessage[] {
  const label = componentLabel(component);
  const request = (x: string, y: string) =>
    [
      `Follow these steps to write a better ${label}.`,
      "1. Cross over the following two prompts into a new prompt.",
      "Prompt 1:",
      fence(component, x),
      "Prompt 2:",
      fence(component, y),
      `2. Mutate the prompt from step 1, and give the final prompt as one block that opens with \`\`\`component ${component} on its own line and closes with \`\`\`.`,
    ].join("\n");
  return [
    { role: "system", content: "hone-role: crossover\nYou evolve prompts: you cross two parents over, then mutate the child." },
    { role: "user", content: request("Work step by step and check each result.", "Test every change before you keep it.") },
    {
      role: "assistant",
      content: `1. Crossover: Work step by step and test every change before you keep it.\n2. ${fence(component, "Make one change at a time, measure it, and keep it only when the result improves.")}`,
    },
    { role: "user", content: request(a, b) },
  ];
}

/**
 * EvoPrompt's genetic algorithm (Guo et al., beeevita/EvoPrompt): a population of `popsize` versions of one harness
 * text (the seed and variations of it), each round one generation: K parent pairs (roulette wheel by default), one
 * call per child doing crossover then mutation, the children measured, and the best `popsize` of parents ∪ children
 * surviving. Rules: rules/evoprompt-ga.ts. Upstream writes popsize children per generation: set --proposals to popsize.
 */
export const evopromptGa: Method<Params> = {
  name: "evoprompt-ga",
  summary: "EvoPrompt GA: a population of one text's versions, roulette-wheel parents, crossover+mutation, top-N survive",
  edits: "spec",
  params,
  startFrom: "seed",
  async propose(ctx) {
    const pop = gaPopulation(ctx.archive, ctx.params);
    if (pop.filling) return initProposals(ctx, Math.min(ctx.k, ctx.params.popsize - pop.members.length));
    // A population collapsed to one distinct member breeds it with itself (the crossover is then a mutation).
    const members = pop.members.length >= 2 ? pop.members : [...pop.members, ...pop.members];
    if (members.length < 2) return [];
    const pairs = gaParentPairs(members, ctx.params.selection, ctx.rng, ctx.k) as [PopMember, PopMember][];
    const texts = textsOf(ctx, members);
    const out: Proposal[] = [];
    for (const [slot, [a, b]] of pairs.entries()) {
      const ta = texts.get(a.id) ?? "";
      const tb = texts.get(b.id) ?? "";
      const messages = gaMessages(ctx.params.component, ta, tb);
      const child = await evolve(ctx, messages, slot);
      // The spec merges over a parent the child differs from (an unchanged spec is refused by the gate).
      const base = child.text === ta && child.text !== tb ? b : a;
      out.push(
        childProposal(ctx.params.component, child.text, uniqueIds([base.id, a.id, b.id]), {
          rationale: `EvoPrompt GA generation ${pop.generation + 1}, child ${slot + 1}: ${a.id} × ${b.id} (${ctx.params.selection})`,
          sample: { messages, completion: child.completion },
          state: { evo: "ga", generation: pop.generation + 1, slot, population: idsOf(pop.members), parents: [a.id, b.id] },
        }),
      );
    }
    return out;
  },
  keep(archive, candidate, p) {
    if (!gaChild(candidate)) return { keep: true, rule: "evoprompt_init", reason: "joins the initial population" };
    const g = generationOf(candidate);
    const survivors = survivorsOf(archive, g, p);
    const keep = survivors.some((m) => m.id === candidate.id);
    const of = membersNamed(archive, candidate.state?.population).length;
    return {
      keep,
      rule: p.survival === "topk" ? "top_n_survive" : "child_replaces_member",
      reason: `generation ${g}: ${keep ? "survives" : "does not survive"} into the population of ${survivors.length} (from ${of} parents and their children)`,
    };
  },
  choose(archive, p) {
    const pop = gaPopulation(archive, p);
    const best = pop.members.reduce<PopMember | undefined>((b, m) => (!b || m.score > b.score ? m : b), undefined);
    return byId(archive, best?.id) ?? bestMeasured(archive);
  },
};
