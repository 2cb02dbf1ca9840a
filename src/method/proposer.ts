import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type FencedBlock, fencedBlocks } from "../fence.ts";
import type { HarnessSpec } from "../harness/spec.ts";
import { printable, SPEC_LIMITS, validateSpec } from "../harness/spec.ts";
import type { Harness } from "../harness/types.ts";
import { ModelError } from "../model/errors.ts";
import type { ChatMessage, ChatModel, ChatResponse } from "../model/types.ts";
import type { DiscoveryTask } from "../task/discovery-task.ts";

/**
 * What the spec proposer is told of the task: its public text and how a candidate is measured. Never the evaluator,
 * gold answers or tests; the reference value only where the task allows it (a task's hone.yaml `show_reference`).
 */
export interface ProposerTask {
  kind: "discovery" | "qa";
  id: string;
  description: string;
  metric: string;
  direction: "maximize" | "minimize";
  reference?: number;
  /** One sentence: how each proposed harness is measured (budget per rollout, or the panel of train questions). */
  measuredBy: string;
}

/** A discovery task as the proposer sees it (the reference value only with `show_reference: true`). */
export function proposerTaskOf(task: DiscoveryTask, maxEvals = task.budget.maxEvals): ProposerTask {
  return {
    kind: "discovery",
    id: task.id,
    description: task.description,
    metric: task.metric,
    direction: task.direction,
    reference: task.showReference ? task.reference?.value : undefined,
    measuredBy: `Each harness is rolled out from the incumbent program with a budget of ${maxEvals} evaluator calls; the best valid score it reaches is its result.`,
  };
}

export interface ProposerContext {
  task: ProposerTask;
  /** The harness proposals change, its score, and what it works on: a program (discovery) or its results (QA). */
  incumbent: { harness: Harness; score?: number; program?: string; results?: string };
  digest: string;
  round: number;
  /** A slot's own instruction (a diversity role), appended to its message; empty for a free slot. */
  slotNote?: string;
}

/** One independent sample of the proposer: its own messages and completion, and the spec it yields (or why not). */
export interface ProposalSample {
  spec?: HarnessSpec;
  raw?: unknown;
  problems: string[];
  /** The first completion was refused and the repair's spec is used: charged the minimum reward. */
  repaired: boolean;
  /** Exactly what the proposer was sent and what it answered (the training row of on-policy learning). */
  messages: ChatMessage[];
  completion: string;
  repairCompletion?: string;
  responses: ChatResponse[];
}

/** Turns a valid spec into a package and runs every check on it; returns the problems (empty when accepted). */
export type SpecCheck = (spec: HarnessSpec) => Promise<string[]>;

const cut = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}\n[... ${s.length - n} characters cut]` : s);

/** What the proposer sees of the incumbent harness: its files, bounded. */
export function describeHarness(h: Harness): string {
  if (h.program)
    return `### harness.json (a harness program: a spec cannot change it)\n${cut(readFileSync(join(h.dir, "harness.json"), "utf8"), 3000)}`;
  const parts = [
    `### agent.yaml\n${cut(readFileSync(join(h.dir, "agent.yaml"), "utf8"), 3000)}`,
    // Whole up to what a spec may write: system_prompt replaces the text, so a prompt shown cut lost its end on any edit.
    `### system prompt\n${cut(h.systemPrompt, SPEC_LIMITS.systemPrompt)}`,
  ];
  for (const s of h.skills) parts.push(`### skills/${s.name}/SKILL.md (description: ${s.description})\n${cut(s.body, 3000)}`);
  parts.push(`### tools\n${h.tools.map((t) => `- ${t.name} (${t.kind}): ${t.description}`).join("\n")}`);
  for (const t of h.tools)
    if (t.kind === "custom" && t.source) parts.push(`### custom_tools/${t.name}.js\n${cut(t.source, 2000)}`);
  parts.push(
    `### middlewares\n${h.middlewares.map((m) => `- ${m.kind === "builtin" ? `hone:${m.name}` : `middlewares/${m.name}.js`} ${JSON.stringify(m.params)}`).join("\n") || "(none)"}`,
  );
  // Generated middleware runs on every step: the proposer sees its code as it sees a generated tool's.
  for (const m of h.middlewares)
    if (m.kind === "custom" && m.source) parts.push(`### middlewares/${m.name}.js\n${cut(m.source, 2000)}`);
  return parts.join("\n\n");
}

/** The messages of one proposal: the proposer harness's system prompt, the task, the incumbent, the experience. */
export function proposerMessages(proposer: Harness, c: ProposerContext): ChatMessage[] {
  const t = c.task;
  const better = t.direction === "maximize" ? "higher" : "lower";
  const reference = t.reference === undefined ? "" : ` Best known value: ${t.reference}.`;
  const inc = c.incumbent;
  const work =
    t.kind === "qa"
      ? `# Incumbent results (mean score ${inc.score ?? "unknown"})\n\n${inc.results ?? "(not measured yet)"}`
      : `# Incumbent program (score ${inc.score ?? "unknown"})\n\n\`\`\`\n${cut(inc.program ?? "", 6000)}\n\`\`\``;
  const user = [
    `# ${t.kind === "qa" ? "Benchmark" : "Task"}: ${t.id}\n\n${t.description}`,
    `Metric: ${t.metric} (${better} is better).${reference} ${t.measuredBy}`,
    work,
    `# Incumbent harness\n\n${describeHarness(inc.harness)}`,
    `# Experience (round ${c.round})\n\n${c.digest}`,
    `Write exactly 1 HarnessSpec for round ${c.round}, as a JSON array of one object in a \`\`\`json block.${c.slotNote ? `\n\n${c.slotNote}` : ""}`,
  ].join("\n\n");
  return [
    { role: "system", content: proposer.systemPrompt },
    { role: "user", content: user },
  ];
}

/**
 * A ```json block no fence closes runs to the end of the answer, as CommonMark reads it (a model that stops after
 * its JSON): its body, or undefined when there is none. Without it, the outermost [...] of the whole answer began
 * inside a code example written before the block.
 */
function unclosedJsonBlock(text: string): string | undefined {
  const open = /(?:^|\n) {0,3}```json[ \t]*\n/g;
  let last: RegExpExecArray | undefined;
  for (let m = open.exec(text); m; m = open.exec(text)) last = m;
  if (!last) return undefined;
  // A fence cut short at the very end ("``") is not JSON; trimmed from the end by hand (a regex would backtrack).
  let end = text.trimEnd().length;
  while (end > 0 && text[end - 1] === "`") end--;
  return text.slice(last.index + last[0].length, end);
}

/** A text's outermost [...] ("" when it has none). */
const outermost = (text: string) => text.slice(text.indexOf("["), text.lastIndexOf("]") + 1);

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The JSON array of proposals in a completion: the last ```json block, else the outermost [...]. */
export function extractProposals(text: string): unknown[] | string {
  // Its ```json (or bare ```) blocks, read by CommonMark's fence rule (src/fence.ts): a skill's code example inside a
  // JSON string never begins a line, and a ```python example before the block is a block of its own.
  const blocks = fencedBlocks(text, "").filter((b) => b.info === "" || b.info === "json");
  const unclosed = blocks.length ? undefined : unclosedJsonBlock(text);
  const candidate = blocks.length
    ? (blocks[blocks.length - 1] as FencedBlock).body
    : unclosed !== undefined
      ? // prose after an unclosed block's JSON ("This should help.") is no JSON: its outermost [...] then, when that
        // parses (else the body, whose error says where it broke: an answer cut at max_tokens)
        parses(unclosed) || !parses(outermost(unclosed))
        ? unclosed
        : outermost(unclosed)
      : outermost(text);
  if (!candidate.trim()) return "the answer holds no JSON array of proposals";
  try {
    const v = JSON.parse(candidate);
    if (Array.isArray(v)) return v;
    if (v && typeof v === "object" && Array.isArray((v as { proposals?: unknown }).proposals))
      return (v as { proposals: unknown[] }).proposals;
    if (v && typeof v === "object") return [v];
    return "the JSON is not an array of proposals";
  } catch (err) {
    // V8 quotes the answer's text in its message: control characters in it are written out, never printed raw.
    return `the JSON does not parse: ${printable((err as Error).message)}`;
  }
}

/** The first proposal of a completion, validated and checked; its problems when it is refused. */
async function firstSpec(text: string, check: SpecCheck): Promise<{ spec?: HarnessSpec; raw?: unknown; problems: string[] }> {
  const parsed = extractProposals(text);
  if (typeof parsed === "string") return { problems: [parsed] };
  const raw = parsed[0];
  if (raw === undefined) return { problems: ["the array holds no proposal"] };
  const v = validateSpec(raw);
  if (!v.spec) return { raw, problems: v.problems.map((p) => `${p.field}: ${p.message}`) };
  const problems = await check(v.spec);
  return problems.length ? { raw, problems } : { spec: v.spec, raw, problems: [] };
}

/**
 * A refused answer the endpoint cut at its max_tokens (finish_reason "length") says so first: the JSON error alone
 * ("Unexpected end of JSON input") does not tell the proposer, nor the records, that its spec was too long to finish.
 */
function withCut<T extends { spec?: HarnessSpec; problems: string[] }>(
  r: T,
  response: ChatResponse | undefined,
  maxTokens: number | undefined,
): T {
  if (r.spec || response?.finish_reason !== "length") return r;
  const limit = maxTokens === undefined ? "its max_tokens" : `its max_tokens (${maxTokens})`;
  return { ...r, problems: [`the answer was cut at ${limit} before it ended: write a shorter spec`, ...r.problems] };
}

/**
 * One independent proposer sample (HarnessTTT's one proposer run per slot): ask for one spec, check it (schema,
 * compile, gate, self-test, leak guard), and allow one repair in the same conversation with every problem fed back.
 * A repaired sample is marked so its reward is the minimum; a refused one has no spec and is never replaced by the
 * incumbent. `sample` makes it a distinct request (its own sampling seed and trial index).
 */
export async function proposeSample(
  model: ChatModel,
  proposer: Harness,
  c: ProposerContext,
  check: SpecCheck,
  sample: { seed: number; trial: number },
): Promise<ProposalSample> {
  const messages = proposerMessages(proposer, c);
  const sampling = { ...proposer.sampling, seed: sample.seed };
  const responses: ChatResponse[] = [];
  const ask = async (msgs: ChatMessage[]) => {
    const r = await model.complete({ messages: msgs, sampling, trial: sample.trial });
    responses.push(r);
    return r.message.content ?? "";
  };
  let completion: string;
  try {
    completion = await ask(messages);
  } catch (err) {
    // A proposer call that exhausts its retries costs this slot, not the run; a replay miss is fatal.
    if (!(err instanceof ModelError) || err.kind === "replay_miss") throw err;
    return { problems: [`the proposer call failed: ${err.message}`], repaired: false, messages, completion: "", responses };
  }
  const first = withCut(await firstSpec(completion, check), responses.at(-1), sampling.max_tokens);
  if (first.spec) return { ...first, repaired: false, messages, completion, responses };
  const request = [
    `Your proposal was rejected: ${first.problems.slice(0, 5).join("; ")}`,
    "Reply with a JSON array of exactly 1 corrected proposal, in a ```json block.",
  ].join("\n");
  let repairCompletion: string;
  try {
    repairCompletion = await ask([...messages, { role: "assistant", content: completion }, { role: "user", content: request }]);
  } catch (err) {
    if (!(err instanceof ModelError) || err.kind === "replay_miss") throw err;
    const problems = [...first.problems, `repair: the proposer call failed: ${err.message}`];
    return { raw: first.raw, problems, repaired: false, messages, completion, responses };
  }
  const fixed = withCut(await firstSpec(repairCompletion, check), responses.at(-1), sampling.max_tokens);
  if (fixed.spec)
    return {
      spec: fixed.spec,
      raw: fixed.raw,
      problems: [`repaired after: ${first.problems.join("; ")}`],
      repaired: true,
      messages,
      completion,
      repairCompletion,
      responses,
    };
  const problems = [...first.problems, ...fixed.problems.map((p) => `repair: ${p}`)];
  return { raw: first.raw, problems, repaired: false, messages, completion, repairCompletion, responses };
}
