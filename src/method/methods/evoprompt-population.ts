/**
 * What EvoPrompt's GA and DE share: the population's members (measured candidates that differ only in the one
 * component), the initial population (the seed and variations of it, EvoPrompt's `para_*` initialisation with one
 * manual prompt), and the single proposer call that writes a child.
 *
 * A member's `text` is its harness content hash: every candidate of these methods is the seed with the component
 * rewritten, so equal hashes mean equal component texts (upstream keys prompts by their text), and the keep rule,
 * which sees no files, can still tell duplicates apart.
 */
import * as z from "zod";
import type { ChatMessage } from "../../model/types.ts";
import type { Archive, Candidate, Proposal, ProposeContext } from "../method.ts";
import type { Member } from "../rules/evoprompt-ga.ts";
import { componentLabel, componentParam, componentSpec, componentText, fence, orientedScore, replyText } from "./prompt-text.ts";

export interface PopMember extends Member {
  id: string;
}

/** Parameters both variants take (EvoPrompt: popsize 10, 10 generations, temperature 0.5). */
export const evoParams = {
  component: componentParam,
  /** The population size (EvoPrompt: 10; 4 here so a small run evolves: DE needs 4, GA 2). */
  popsize: z.number().int().min(2).max(64).default(4),
  /** The evolver's temperature for variations and children (EvoPrompt: 0.5). */
  temperature: z.number().min(0).max(2).default(0.5),
  max_tokens: z.number().int().min(256).max(32_768).default(4096),
};

export interface EvoParams {
  component: string;
  popsize: number;
  temperature: number;
  max_tokens: number;
}

/** A candidate as a member, when it was measured. */
export function memberOf(archive: Archive, c: Candidate | undefined): PopMember | undefined {
  const score = c ? orientedScore(archive, c) : undefined;
  return c && score !== undefined ? { id: c.id, text: c.contentHash ?? c.id, score } : undefined;
}

export function byId(archive: Archive, id: unknown): Candidate | undefined {
  return typeof id === "string" ? archive.candidates.find((c) => c.id === id) : undefined;
}

const isInit = (c: Candidate) => c.round === 0 || c.state?.evo === "init";

/** The initial population: the seed and its measured variations, in archive order, at most `popsize`. */
export function initMembers(archive: Archive, popsize: number): PopMember[] {
  return archive.candidates
    .filter(isInit)
    .map((c) => memberOf(archive, c))
    .filter((m): m is PopMember => !!m)
    .slice(0, popsize);
}

/** The ids of a population, as recorded in each child's state. */
export const idsOf = (members: readonly PopMember[]): string[] => members.map((m) => m.id);

/** The members a child's state names (its generation's population), in order. */
export function membersNamed(archive: Archive, ids: unknown): PopMember[] {
  if (!Array.isArray(ids)) return [];
  return ids.map((id) => memberOf(archive, byId(archive, id))).filter((m): m is PopMember => !!m);
}

function variationMessages(component: string, text: string): ChatMessage[] {
  const label = componentLabel(component);
  return [
    { role: "system", content: "hone-role: rewrite\nYou write variations of a prompt that keep what it means." },
    {
      role: "user",
      content: [
        `Write a variation of the following ${label} that keeps its meaning.`,
        "Input:",
        fence(component, text),
        `Output: the variation as one block that opens with \`\`\`component ${component} on its own line and closes with \`\`\`.`,
      ].join("\n"),
    },
  ];
}

/** `n` variations of the seed's component, to fill the initial population (EvoPrompt's paraphrases). */
export async function initProposals(ctx: ProposeContext<EvoParams>, n: number): Promise<Proposal[]> {
  const seed = ctx.archive.candidates.find((c) => c.round === 0);
  const text = seed ? componentText(seed, ctx.params.component, ctx.files) : undefined;
  if (!seed || !text) return [];
  const messages = variationMessages(ctx.params.component, text);
  const out: Proposal[] = [];
  for (let sample = 0; sample < n; sample++) {
    const r = await ctx.proposer.complete(messages, {
      temperature: ctx.params.temperature,
      maxTokens: ctx.params.max_tokens,
      sample,
    });
    out.push(
      childProposal(ctx.params.component, replyText(r.text, ctx.params.component), [seed.id], {
        rationale: `EvoPrompt initial population: variation ${sample + 1} of the seed`,
        sample: { messages, completion: r.text },
        state: { evo: "init" },
      }),
    );
  }
  return out;
}

/** A proposal setting the component over `parents[0]`; a text outside the schema is recorded as refused, with why. */
export function childProposal(
  component: string,
  text: string,
  parents: string[],
  rest: Pick<Proposal, "rationale" | "sample" | "state">,
): Proposal {
  const { spec, problems } = componentSpec(component, text);
  return spec
    ? { parents, spec, ...rest }
    : { parents, ...rest, rationale: `${rest.rationale}; no usable ${component} in the answer: ${problems.join("; ")}` };
}

/** One evolver call and the child text in its answer. */
export async function evolve(
  ctx: ProposeContext<EvoParams>,
  messages: ChatMessage[],
  sample: number,
): Promise<{ text: string; completion: string }> {
  const r = await ctx.proposer.complete(messages, {
    temperature: ctx.params.temperature,
    maxTokens: ctx.params.max_tokens,
    sample,
  });
  return { text: replyText(r.text, ctx.params.component), completion: r.text };
}

/** The members' component texts, by id (read once per propose step). */
export function textsOf(ctx: ProposeContext<EvoParams>, members: readonly PopMember[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of members) {
    const c = byId(ctx.archive, m.id);
    const t = c ? componentText(c, ctx.params.component, ctx.files) : undefined;
    out.set(m.id, t ?? "");
  }
  return out;
}

/** The parents of a child, without repeats, its base first. */
export const uniqueIds = (ids: readonly string[]): string[] => [...new Set(ids)];
