import * as z from "zod";
import type { ChatMessage } from "../../model/types.ts";
import { type Archive, bestMeasured, type Method, type Proposal, type ProposeContext } from "../method.ts";
import {
  extractInstruction,
  formatHistory,
  metaPromptHistory,
  newInstructions,
  OPRO_DEFAULTS,
  polish,
  type ScoredInstruction,
} from "../rules/opro.ts";
import { exemplarLines } from "./opro-exemplars.ts";
import {
  COMPONENT_OPEN,
  componentLabel,
  componentLimit,
  componentParam,
  componentSpec,
  componentText,
  fence,
  orientedScore,
  replyText,
} from "./prompt-text.ts";

const params = z
  .object({
    /** The text OPRO optimizes: the system prompt, or `skill_body.<skill>`. */
    component: componentParam,
    /** At most this many scored versions shown (OPRO's max_num_instructions). */
    max_shown: z.number().int().min(1).max(100).default(OPRO_DEFAULTS.maxShown),
    /**
     * Versions scoring below this are not shown; 0 shows all (old_instruction_score_threshold, 0.3 with GPT
     * optimizers). It applies only where every score is an accuracy in [0, 1] (a QA benchmark's mean).
     */
    threshold: z.number().min(0).max(1).default(OPRO_DEFAULTS.threshold),
    /** Scores shown as round(score·buckets) when they all lie in [0, 1]; 0 shows round(score, 3) (num_score_buckets). */
    buckets: z.number().int().min(0).max(1000).default(OPRO_DEFAULTS.buckets),
    /** Exemplars of what the task met, drawn at random each step (num_few_shot_questions_for_instruction_refinement). */
    exemplars: z.number().int().min(0).max(20).default(3),
    /** Which tasks the exemplars show (few_shot_selection_criteria): random, or ones some version missed. */
    exemplar_selection: z.enum(["random", "most_wrong"]).default("random"),
    /** The optimizer's temperature (OPRO: 1.0, constant). */
    temperature: z.number().min(0).max(2).default(1),
    /** Longest new text kept (OPRO: 500 characters for one-sentence instructions; here the component's spec limit). */
    max_length: z.number().int().min(1).max(12_000).optional(),
    /** Drop new texts holding a digit (OPRO's GSM8K filter; off, since offline hints are numbers). */
    reject_digits: z.boolean().default(false),
    max_tokens: z.number().int().min(256).max(32_768).default(4096),
  })
  .strict();

type Params = z.infer<typeof params>;

/** Every scored version of the component: measured candidates with their higher-is-better score, in archive order. */
export function scoredHistory(
  archive: Archive,
  component: string,
  files: (id: string) => Record<string, string>,
): (ScoredInstruction & { id: string })[] {
  const out: (ScoredInstruction & { id: string })[] = [];
  for (const c of archive.candidates) {
    const score = orientedScore(archive, c);
    const text = score === undefined ? undefined : componentText(c, component, files);
    if (score !== undefined && text) out.push({ id: c.id, text, score, step: c.round });
  }
  return out;
}

/** Whether the scores are accuracies (maximised, all in [0, 1]): OPRO's bucketing and threshold assume them. */
const unitScale = (ctx: ProposeContext<Params>, history: readonly ScoredInstruction[]) =>
  ctx.task.direction === "maximize" && history.every((h) => h.score >= 0 && h.score <= 1);

/** The score in the task's own sense (a minimised metric was negated to rank it). */
const asMeasured = (ctx: ProposeContext<Params>, score: number) => (ctx.task.direction === "maximize" ? score : -score);

/** OPRO's meta-prompt: the scored versions ascending, the task and its exemplars, then the request for a new one. */
export function metaPrompt(
  ctx: ProposeContext<Params>,
  history: readonly ScoredInstruction[],
): { messages: ChatMessage[]; shown: ScoredInstruction[] } {
  const { component } = ctx.params;
  const label = componentLabel(component);
  const unit = unitScale(ctx, history);
  const threshold = unit ? ctx.params.threshold : 0;
  const shown = metaPromptHistory(history, { maxShown: ctx.params.max_shown, threshold });
  const buckets = unit && ctx.params.buckets > 0 ? ctx.params.buckets : Number.POSITIVE_INFINITY;
  const better = ctx.task.direction === "maximize" ? "higher" : "lower";
  const scale = buckets === Number.POSITIVE_INFINITY ? `${better} is better` : `the score ranges from 0 to ${buckets}`;
  const exemplars = exemplarLines(ctx.archive, ctx.params.exemplars, ctx.params.exemplar_selection, ctx.rng);
  const user = [
    `Your task is to write the ${label} of an agent. Below are earlier versions of it with their scores, from worst to best (${scale}).`,
    formatHistory(
      shown.map((h) => ({ ...h, text: fence(component, h.text), score: asMeasured(ctx, h.score) })),
      buckets,
    ),
    "",
    `The agent works on this task (metric: ${ctx.task.metric}, ${better} is better):`,
    ctx.task.description.trim(),
    ...(exemplars.length ? ["", "Some of what earlier versions met:", ...exemplars.map((l) => `- ${l}`)] : []),
    "",
    `Write a new ${label} that is different from every version above and scores better than all of them. ` +
      `Give it as one block that opens with \`\`\`component ${component} on its own line and closes with \`\`\`. ` +
      "It should be concise, effective and apply to every run of the task.",
  ].join("\n");
  const system = "hone-role: optimize\nYou are an optimizer: from scored versions of a text you write a better one.";
  return {
    messages: [
      { role: "system", content: system },
      { role: "user", content: user },
    ],
    shown,
  };
}

/**
 * OPRO (Yang et al., google-deepmind/opro): every scored version of one harness text is kept; each step the
 * optimizer sees the best `max_shown` ascending (with the score threshold), the task and a few exemplars, and samples
 * K new versions (K = --proposals; OPRO samples 8 per step); new, unseen ones that pass OPRO's filters are scored.
 * Rules: rules/opro.ts. The spec merges over the best version so far (only the component differs between versions).
 * Deviations: a version is a fenced ```component``` block, not <INS> tags (a harness text spans lines); the threshold
 * and the 0–100 buckets apply only to accuracies (maximised, in [0, 1]), other scores show as round(·, 3) in the
 * task's own sense; exemplars name tasks and evaluator feedback, never gold answers (opro-exemplars.ts).
 */
export const opro: Method<Params> = {
  name: "opro",
  summary: "OPRO: a meta-prompt of the scored versions of one text (ascending, best 20), K new versions per step",
  edits: "spec",
  params,
  derivedDefaults: {
    max_length: { rule: "the component's limit", words: "the spec's length limit of the component optimized" },
  },
  startFrom: "seed",
  async propose(ctx) {
    const { component } = ctx.params;
    const history = scoredHistory(ctx.archive, component, ctx.files);
    const best = bestMeasured(ctx.archive);
    if (!best || history.length === 0) return [];
    const { messages, shown } = metaPrompt(ctx, history);
    const samples: { text: string; completion: string; sample: number }[] = [];
    for (let sample = 0; sample < ctx.k; sample++) {
      const r = await ctx.proposer.complete(messages, {
        temperature: ctx.params.temperature,
        maxTokens: ctx.params.max_tokens,
        sample,
      });
      samples.push({ text: replyText(r.text, component), completion: r.text, sample });
    }
    const seen = seenTexts(ctx.archive, component, ctx.files);
    const fresh = newInstructions(
      samples.map((s) => s.text),
      seen,
      {
        maxLength: ctx.params.max_length ?? componentLimit(component),
        rejectDigits: ctx.params.reject_digits,
        // OPRO's "INS" filter catches its own <INS> tag left in an answer; hone's container is the fenced block, and
        // "INS" is a word of harness texts ("# INSTRUCTIONS"), which would drop every version of such a prompt.
        marker: COMPONENT_OPEN,
      },
    );
    const proposals: Proposal[] = [];
    for (const text of fresh) {
      const from = samples.find((s) => polish(extractInstruction(s.text)) === text) as (typeof samples)[number];
      const { spec } = componentSpec(component, text);
      if (!spec) continue; // outside the schema's limits: filtered like OPRO's over-long instructions
      proposals.push({
        parents: [best.id],
        spec,
        rationale: `OPRO step ${ctx.round}, sample ${from.sample}: from ${history.length} scored versions, ${shown.length} shown`,
        sample: { messages, completion: from.completion },
        state: { opro: { step: ctx.round, sample: from.sample, shown: shown.map((h) => (h as { id?: string }).id) } },
      });
    }
    return proposals;
  },
  keep(_archive, candidate) {
    return {
      keep: true,
      rule: "opro_scored",
      reason: `OPRO keeps every scored version (${candidate.measured?.score ?? "no score"})`,
    };
  },
  choose: (archive) => bestMeasured(archive),
};

/** Every version proposed so far that the gate let through (scored or not), so a step never proposes one again. */
function seenTexts(archive: Archive, component: string, files: (id: string) => Record<string, string>): Set<string> {
  const seen = new Set<string>();
  for (const c of archive.candidates) {
    const t = c.status === "refused" ? undefined : componentText(c, component, files);
    if (t) seen.add(t);
  }
  return seen;
}
