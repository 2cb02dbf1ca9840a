import * as z from "zod";
import { bestMeasured, type Candidate, type Method, type ProposeContext } from "../method.ts";
import {
  applyOperations,
  type BulletTag,
  checkCuratorOutput,
  curatorDue,
  dedupe,
  emptyPlaybook,
  fitBudget,
  formatPlaybook,
  isNewBestPlaybook,
  nextBulletNumber,
  type Playbook,
  parsePlaybook,
  playbookTokens,
  tagBullets,
} from "../rules/ace.ts";
import { oriented } from "../rules/sample.ts";
import { curatorMessages, playbookStats, reflectorMessages } from "./reflective/ace-prompts.ts";
import { checkedSpec, componentTexts } from "./reflective/components.ts";
import { candidateRollouts, feedbackText, outputsText } from "./reflective/evidence.ts";
import { bulletTags, extractJson, quoted } from "./reflective/fenced.ts";

const params = z
  .object({
    /** The skill that holds the playbook (created in the first round). */
    skill: z
      .string()
      .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/)
      .max(64)
      .default("playbook"),
    /** ACE's 80,000 scaled to what one skill body may hold (12,000 characters ≈ 3,000 tokens). */
    token_budget: z.number().int().min(200).max(3000).default(2500),
    curator_frequency: z.number().int().min(1).max(100).default(1),
    /** ACE's BulletpointAnalyzer, off by default as upstream. */
    dedupe: z.boolean().default(false),
    dedupe_threshold: z.number().min(0).max(1).default(0.9),
    max_tokens: z.number().int().min(256).max(32_768).default(4096),
  })
  .strict();

type Params = z.infer<typeof params>;

const DESCRIPTION =
  "ACE playbook: strategies, formulas and mistakes learned from earlier attempts at this task, as bullets with ids and helpful/harmful counts. Load it before your first edit and follow its bullets.";

/** The step's parent: the last measured candidate (ACE's playbook moves on every step, whatever it scored). */
const latestMeasured = (cs: readonly Candidate[]) => [...cs].reverse().find((c) => c.status === "measured");

interface AceMemo {
  next_id?: number;
}

async function reflect(ctx: ProposeContext<Params>, parent: Candidate, pb: Playbook) {
  const rollout = candidateRollouts(parent, 1)[0];
  const correct = rollout?.improved === true;
  const messages = reflectorMessages({
    question: quoted(ctx.task.description, 3000),
    trace: rollout ? outputsText(rollout) : "(no trajectory recorded)",
    answer: `a program scoring ${parent.measured?.score ?? "nothing valid"} (${ctx.task.metric}, ${ctx.task.direction})`,
    feedback: `${feedbackText(parent, rollout, ctx.task.direction)}\n${correct ? "The attempt improved on its starting score." : "The attempt did not improve on its starting score."}`,
    playbook: formatPlaybook(pb),
  });
  const reply = await ctx.proposer.complete(messages, { maxTokens: ctx.params.max_tokens, sample: 0 });
  return { reply: reply.text, tags: bulletTags(reply.text) as BulletTag[], correct, messages };
}

async function curate(ctx: ProposeContext<Params>, pb: Playbook, reflection: string, next: number) {
  const messages = curatorMessages({
    question: quoted(ctx.task.description, 3000),
    reflection,
    playbook: formatPlaybook(pb),
    stats: playbookStats(pb),
    tokenBudget: ctx.params.token_budget,
    step: ctx.round,
    sections: pb.sections.map((s) => s.title),
  });
  const reply = await ctx.proposer.complete(messages, { maxTokens: ctx.params.max_tokens, sample: 1 });
  const checked = checkCuratorOutput(extractJson(reply.text));
  const sample = { messages, completion: reply.text };
  if ("error" in checked) return { playbook: pb, next, error: checked.error, operations: [], added: [], ignored: [], sample };
  const r = applyOperations(pb, checked.operations, next);
  return { ...r, error: undefined, operations: checked.operations, sample };
}

const brief = (ops: readonly { type: string; section?: string; content?: string }[]) =>
  ops.slice(0, 20).map((o) => ({ type: o.type, section: o.section, content: String(o.content ?? "").slice(0, 300) }));

/**
 * ACE (Agentic Context Engineering, Zhang et al., arXiv 2510.04618; ace-agent/ace ba78d34): one playbook step per
 * round. The playbook is a skill document (skills/playbook/SKILL.md, created in the first round from ACE's empty
 * sections) of bullets `[id] helpful=H harmful=X :: text`. The reflector reads the last rollout's trajectory and the
 * evaluator's feedback and tags the bullets (counters +1); every `curator_frequency` steps the curator emits delta
 * operations (ADD applied, others recorded as ignored, as ACE's code does), then optional de-duplication and the
 * token budget with eviction (rules/ace.ts). Every step is kept (the playbook moves on); the final choice is ACE's
 * best_playbook, the first with the highest score. Not ported: ACE's reflect-and-retry of a wrong answer (up to 3 rounds of
 * a fresh attempt); a step's attempt here is its parent's rollout, so each step has one tagging reflection.
 */
export const ace: Method<Params> = {
  name: "ace",
  summary:
    "ACE: a playbook skill of bullets with helpful/harmful counters, a reflector tagging them from the last rollout, a curator adding delta bullets",
  edits: "playbook",
  params,
  startFrom: "seed",
  proposalsPerRound: () => 1,
  async propose(ctx) {
    const parent = latestMeasured(ctx.archive.candidates);
    if (!parent) return [];
    const p = ctx.params;
    const body = componentTexts(ctx.files(parent.id))[`skill_body.${p.skill}`];
    const before = body === undefined ? emptyPlaybook() : parsePlaybook(body);
    const memo = (parent.state?.ace ?? {}) as AceMemo;
    const r = await reflect(ctx, parent, before);
    const tagged = tagBullets(before, r.tags);
    const next = Math.max(typeof memo.next_id === "number" ? memo.next_id : 0, nextBulletNumber(tagged));
    const c = curatorDue(ctx.round, p.curator_frequency) ? await curate(ctx, tagged, r.reply, next) : undefined;
    let pb = c?.playbook ?? tagged;
    const bulletsBefore = pb.sections.reduce((n, s) => n + s.bullets.length, 0);
    if (p.dedupe) pb = dedupe(pb, { threshold: p.dedupe_threshold, merge: true });
    const deduplicated = bulletsBefore - pb.sections.reduce((n, s) => n + s.bullets.length, 0);
    const fitted = fitBudget(pb, p.token_budget);
    pb = fitted.playbook;
    const text = formatPlaybook(pb);
    const spec =
      body === undefined
        ? { new_skills: [{ name: p.skill, description: DESCRIPTION, body: text }] }
        : { skill_body: { [p.skill]: text } };
    const checked = checkedSpec(spec);
    const tagged_ids = (tag: string) =>
      r.tags
        .filter((t) => t.tag === tag)
        .map((t) => String(t.id ?? t.bullet ?? "").slice(0, 32))
        .slice(0, 100);
    const ace = {
      step: ctx.round,
      parent: parent.id,
      correct: r.correct,
      tags: { helpful: tagged_ids("helpful"), harmful: tagged_ids("harmful") },
      curated: c !== undefined,
      curator_error: c?.error,
      operations: brief(c?.operations ?? []),
      added: c?.added ?? [],
      ignored: c?.ignored ?? [],
      deduplicated,
      evicted: fitted.evicted.map((b) => b.id),
      tokens: playbookTokens(pb),
      next_id: c?.next ?? next,
      counters: Object.fromEntries(pb.sections.flatMap((s) => s.bullets.map((b) => [b.id, [b.helpful, b.harmful]]))),
    };
    return [
      {
        parents: [parent.id],
        spec: checked.spec,
        rationale: checked.problem
          ? `ACE step ${ctx.round} refused before the gate: ${checked.problem}`
          : `ACE step ${ctx.round}: ${r.tags.length} bullet tag(s) from ${parent.id}'s rollout, ${c?.added.length ?? 0} bullet(s) added${c?.error ? ` (curator output rejected: ${c.error})` : ""}, ${fitted.evicted.length} evicted`,
        sample: c?.sample ?? { messages: r.messages, completion: r.reply },
        state: { ace },
      },
    ];
  },
  keep(archive, candidate) {
    if (candidate.id === "r00-seed") return { keep: true, rule: "seed", reason: "ACE starts from the seed harness" };
    const sign = (x: number) => oriented(x, archive.direction);
    const earlier = archive.candidates.filter((c) => c.round < candidate.round && c.status === "measured");
    const scores = earlier.map((c) => c.measured?.score).filter((s): s is number => typeof s === "number");
    const best = scores.length ? Math.max(...scores.map(sign)) : Number.NEGATIVE_INFINITY;
    const s = candidate.measured?.score;
    const newBest = typeof s === "number" && isNewBestPlaybook(sign(s), best);
    return {
      keep: true,
      rule: "ace_step",
      reason: `the playbook moves on every step; ${newBest ? "a new best_playbook" : "not a new best_playbook"} (${s ?? "no score"})`,
    };
  },
  choose: (archive) => bestMeasured(archive),
};
