import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { HarnessSpec } from "../harness/spec.ts";
import { validateSpec } from "../harness/spec.ts";
import type { Harness } from "../harness/types.ts";
import { ModelError } from "../model/errors.ts";
import type { ChatMessage, ChatModel, ChatResponse } from "../model/types.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";

export interface ProposerContext {
  task: DiscoveryTask;
  incumbent: { harness: Harness; program: string; score?: number };
  digest: string;
  round: number;
  k: number;
}

/** One slot of a round: a spec that compiled into a gated package, or the reasons it did not. */
export interface ProposalSlot {
  slot: number;
  spec?: HarnessSpec;
  raw?: unknown;
  problems: string[];
  repaired: boolean;
}

/** Turns a valid spec into a package and runs every check on it; returns the problems (empty when accepted). */
export type SpecCheck = (spec: HarnessSpec, slot: number) => Promise<string[]>;

export interface ProposeOutcome {
  slots: ProposalSlot[];
  messages: ChatMessage[];
  completion: string;
  repairCompletion?: string;
  responses: ChatResponse[];
}

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}\n[... ${s.length - n} characters cut]` : s);

/** What the proposer sees of the incumbent harness: its files, bounded. */
export function describeHarness(h: Harness): string {
  const parts = [
    `### agent.yaml\n${cut(readFileSync(join(h.dir, "agent.yaml"), "utf8"), 3000)}`,
    `### system prompt\n${cut(h.systemPrompt, 4000)}`,
  ];
  for (const s of h.skills) parts.push(`### skills/${s.name}/SKILL.md (description: ${s.description})\n${cut(s.body, 3000)}`);
  parts.push(`### tools\n${h.tools.map((t) => `- ${t.name} (${t.kind}): ${t.description}`).join("\n")}`);
  for (const t of h.tools)
    if (t.kind === "custom" && t.source) parts.push(`### custom_tools/${t.name}.js\n${cut(t.source, 2000)}`);
  parts.push(
    `### middlewares\n${h.middlewares.map((m) => `- ${m.kind === "builtin" ? `hone:${m.name}` : `middlewares/${m.name}.js`} ${JSON.stringify(m.params)}`).join("\n") || "(none)"}`,
  );
  return parts.join("\n\n");
}

export function proposerMessages(proposer: Harness, c: ProposerContext): ChatMessage[] {
  const t = c.task;
  const user = [
    `# Task: ${t.id}\n\n${t.description}`,
    `Metric: ${t.metric} (${t.direction === "maximize" ? "higher" : "lower"} is better). Best known value: ${t.reference?.value ?? "unknown"}. Budget per rollout: ${t.budget.maxEvals} evaluator calls.`,
    `# Incumbent program (score ${c.incumbent.score ?? "unknown"})\n\n\`\`\`\n${cut(c.incumbent.program, 6000)}\n\`\`\``,
    `# Incumbent harness\n\n${describeHarness(c.incumbent.harness)}`,
    `# Experience (round ${c.round})\n\n${c.digest}`,
    `Write exactly ${c.k} HarnessSpecs for round ${c.round}, as one JSON array in a \`\`\`json block.`,
  ].join("\n\n");
  return [
    { role: "system", content: proposer.systemPrompt },
    { role: "user", content: user },
  ];
}

/** The JSON array of proposals in a completion: the last ```json block, else the outermost [...]. */
export function extractProposals(text: string): unknown[] | string {
  const blocks = [...text.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)];
  const candidate = blocks.length
    ? (blocks[blocks.length - 1]?.[1] ?? "")
    : text.slice(text.indexOf("["), text.lastIndexOf("]") + 1);
  if (!candidate.trim()) return "the answer holds no JSON array of proposals";
  try {
    const v = JSON.parse(candidate);
    if (Array.isArray(v)) return v;
    if (v && typeof v === "object" && Array.isArray((v as { proposals?: unknown }).proposals))
      return (v as { proposals: unknown[] }).proposals;
    return "the JSON is not an array of proposals";
  } catch (err) {
    return `the JSON does not parse: ${(err as Error).message}`;
  }
}

async function checkSlot(raw: unknown, slot: number, check: SpecCheck): Promise<{ spec?: HarnessSpec; problems: string[] }> {
  if (raw === undefined) return { problems: ["missing: fewer proposals than asked for"] };
  const v = validateSpec(raw);
  if (!v.spec) return { problems: v.problems.map((p) => `${p.field}: ${p.message}`) };
  const problems = await check(v.spec, slot);
  return problems.length ? { problems } : { spec: v.spec, problems: [] };
}

/**
 * One round of proposals: ask for K specs, check each (schema, compile, gate, self-test, leak guard), and allow
 * one repair with every problem fed back. A repaired slot is marked so its reward is the minimum; an invalid slot
 * stays empty and is never filled with the incumbent.
 */
export async function propose(
  model: ChatModel,
  proposer: Harness,
  c: ProposerContext,
  check: SpecCheck,
  seed: number,
  recorded?: { completion: string; repairCompletion?: string },
): Promise<ProposeOutcome> {
  const messages = proposerMessages(proposer, c);
  const sampling = { ...proposer.sampling, seed };
  const responses: ChatResponse[] = [];
  const ask = async (msgs: ChatMessage[], replay: string | undefined) => {
    if (replay !== undefined) return replay;
    const r = await model.complete({ messages: msgs, sampling });
    responses.push(r);
    return r.message.content ?? "";
  };
  let completion: string;
  try {
    completion = await ask(messages, recorded?.completion);
  } catch (err) {
    // A proposer call that exhausts its retries costs the round its proposals, not the run; a replay miss is fatal.
    if (!(err instanceof ModelError) || err.kind === "replay_miss") throw err;
    const problem = `the proposer call failed: ${err.message}`;
    return {
      slots: Array.from({ length: c.k }, (_, slot) => ({ slot, problems: [problem], repaired: false })),
      messages,
      completion: "",
      responses,
    };
  }
  const parsed = extractProposals(completion);
  const raws = typeof parsed === "string" ? [] : parsed.slice(0, c.k);
  const slots: ProposalSlot[] = [];
  for (let i = 0; i < c.k; i++) {
    const r = typeof parsed === "string" ? { problems: [parsed] } : await checkSlot(raws[i], i, check);
    slots.push({ slot: i, raw: raws[i], spec: r.spec, problems: r.problems, repaired: false });
  }
  const broken = slots.filter((s) => !s.spec);
  if (broken.length === 0) return { slots, messages, completion, responses };

  const request = [
    `${broken.length} of your proposals were rejected:`,
    ...broken.map((s) => `- proposal ${s.slot + 1}: ${s.problems.slice(0, 5).join("; ")}`),
    `Reply with a JSON array of exactly ${broken.length} corrected proposals, in the same order, in a \`\`\`json block.`,
  ].join("\n");
  const repairCompletion = await ask(
    [...messages, { role: "assistant", content: completion }, { role: "user", content: request }],
    recorded?.repairCompletion,
  );
  const repaired = extractProposals(repairCompletion);
  for (const [j, s] of broken.entries()) {
    if (typeof repaired === "string") {
      s.problems.push(`repair: ${repaired}`);
      continue;
    }
    const r = await checkSlot(repaired[j], s.slot, check);
    if (r.spec) {
      s.spec = r.spec;
      s.raw = repaired[j];
      s.repaired = true;
      s.problems = [`repaired after: ${s.problems.join("; ")}`];
    } else s.problems.push(...r.problems.map((p) => `repair: ${p}`));
  }
  return { slots, messages, completion, repairCompletion, responses };
}
