import * as z from "zod";
import { HoneError } from "../../errors.ts";
import { type Archive, bestMeasured, type Candidate, type KeepDecision, type Method, type ProposeContext } from "../method.ts";
import { oriented } from "../rules/sample.ts";
import {
  applyEdits,
  clipEdits,
  editBudget,
  type FailurePattern,
  formatStepBuffer,
  type GateAction,
  gate,
  pushStep,
  type SkillEdit,
  type StepEntry,
  stepEntry,
} from "../rules/skillopt.ts";
import { checkedSpec, componentTexts, skillNames } from "./reflective/components.ts";
import { candidateRollouts, feedbackText, outputsText, type RolloutNotes } from "./reflective/evidence.ts";
import { quoted } from "./reflective/fenced.ts";
import { analystMessages, readEdits } from "./reflective/skillopt-prompt.ts";

const params = z
  .object({
    /** The skill document trained (default: the seed harness's first skill). */
    skill: z
      .string()
      .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/)
      .max(64)
      .optional(),
    /** SkillOpt's learning_rate: the most edits one step applies. */
    learning_rate: z.number().int().min(1).max(64).default(4),
    min_learning_rate: z.number().int().min(1).max(64).default(2),
    lr_scheduler: z.enum(["constant", "linear", "cosine", "autonomous"]).default("cosine"),
    /** Steps the schedule anneals over (SkillOpt: epochs × steps per epoch); set it to --rounds. */
    total_steps: z.number().int().min(1).max(10_000).default(8),
    /** The step buffer is cleared when an epoch starts (SkillOpt: train size / batch size steps per epoch). */
    steps_per_epoch: z.number().int().min(1).max(10_000).default(4),
    use_gate: z.boolean().default(true),
    /** Step-buffer entries shown to the analyst (no limit upstream; bounded here). */
    buffer_max: z.number().int().min(1).max(100).default(8),
    max_tokens: z.number().int().min(256).max(32_768).default(4096),
  })
  .strict();

type Params = z.infer<typeof params>;

/** What a SkillOpt step records with its candidate (`state.skillopt`). */
export interface SkillOptMemo {
  step: number;
  epoch: number;
  /** The current skill's candidate the edits were made to. */
  current: string;
  skill: string;
  budget: number;
  edits: SkillEdit[];
  statuses: string[];
  source: string;
  n_total: number;
  n_fail: number;
  failure_patterns: FailurePattern[];
}

export const skilloptMemo = (c: Candidate): SkillOptMemo | undefined => {
  const m = c.state?.skillopt as SkillOptMemo | undefined;
  return m && typeof m === "object" && typeof m.step === "number" && typeof m.current === "string" ? m : undefined;
};

const scoreOf = (c: Candidate | undefined, archive: Archive): number => {
  const s = c?.status === "measured" ? c.measured?.score : undefined;
  return typeof s === "number" ? oriented(s, archive.direction) : Number.NEGATIVE_INFINITY;
};

const accepted = (c: Candidate) => c.status === "measured" && (c.id === "r00-seed" || c.kept?.keep === true);

/** The current skill at the start of `round`: the last candidate the gate accepted (the seed until one is). */
export function currentSkill(archive: Archive, round: number): Candidate | undefined {
  return archive.candidates.filter((c) => c.round < round && accepted(c)).at(-1);
}

/** The gate's action on a candidate: its score against the current skill's and the best accepted before it. */
export function gateAction(archive: Archive, c: Candidate, p: Params): { action: GateAction; mine: number; current: number } {
  const memo = skilloptMemo(c);
  const current = scoreOf(
    archive.candidates.find((x) => x.id === memo?.current),
    archive,
  );
  const earlier = archive.candidates.filter((x) => x.round < c.round && accepted(x)).map((x) => scoreOf(x, archive));
  const best = Math.max(Number.NEGATIVE_INFINITY, ...earlier);
  const mine = scoreOf(c, archive);
  return { action: c.status === "measured" ? gate(mine, current, best, p.use_gate) : "reject", mine, current };
}

/** Failure patterns of a rollout: invalid evaluations grouped by their reason's start (SkillOpt groups by type). */
function failures(task: string, notes: RolloutNotes | undefined): { nTotal: number; nFail: number; patterns: FailurePattern[] } {
  if (!notes) return { nTotal: 0, nFail: 0, patterns: [] };
  const counts = new Map<string, number>();
  for (const e of notes.evaluations.filter((x) => !x.valid)) {
    const key = quoted((e.reason ?? "invalid").replace(/\s+/g, " "), 80);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const patterns = [...counts].slice(0, 5).map(([pattern, count]) => ({ pattern, count, taskIds: [task] }));
  if (!notes.improved) patterns.push({ pattern: "the rollout did not improve on its starting score", count: 1, taskIds: [task] });
  const nFail = notes.evaluations.filter((x) => !x.valid).length;
  return { nTotal: notes.evaluations.length, nFail, patterns };
}

/** The step buffer at `step`: one entry per earlier step of its epoch (rejected edits with their scores). */
export function stepBuffer(archive: Archive, step: number, p: Params): StepEntry[] {
  const epoch = Math.floor((step - 1) / p.steps_per_epoch);
  let buffer: StepEntry[] = [];
  for (const c of archive.candidates) {
    const m = skilloptMemo(c);
    if (!m || m.epoch !== epoch || m.step >= step || c.status === "pending") continue;
    const g = gateAction(archive, c, p);
    const entry = { step: m.step, action: g.action, nTotal: m.n_total, nFail: m.n_fail, failurePatterns: m.failure_patterns };
    buffer = pushStep(buffer, stepEntry(entry, m.edits, g.current, g.mine), p.buffer_max);
  }
  return buffer;
}

function trajectoryText(ctx: ProposeContext<Params>, c: Candidate, notes: RolloutNotes | undefined): string {
  return [
    `### Trajectory 1 (id=${ctx.task.id})`,
    `Task: ${quoted(ctx.task.description, 3000)}`,
    `Metric: ${ctx.task.metric} (${ctx.task.direction})`,
    notes ? outputsText(notes) : "(no trajectory recorded)",
    feedbackText(c, notes, ctx.task.direction),
  ].join("\n");
}

function skillName(ctx: ProposeContext<Params>): string {
  const files = ctx.files("r00-seed");
  const name = ctx.params.skill ?? skillNames(files)[0];
  if (!name || componentTexts(files)[`skill_body.${name}`] === undefined)
    throw new HoneError(
      "usage",
      `skillopt trains one skill document, and the seed harness has ${name ? `no skill "${name}"` : "no skill"}: add skills/<name>/SKILL.md to the harness or give --param skill=<name>`,
    );
  return name;
}

/**
 * SkillOpt (microsoft/SkillOpt bdfdc30, arXiv 2605.23904): one skill document is trained, one step per round. The
 * analyst reads the current skill's rollout (failed → the error analyst, else the success analyst) and the step buffer
 * of the epoch, and proposes at most L edits (L from the cosine edit-budget schedule, rules/skillopt.ts); the edits are
 * clipped to L and applied to the current skill. Keep (the validation gate): strictly better than the current skill
 * (accept; accept_new_best beyond the best), else reject, and the current skill stays. Rejected edits and their
 * scores go into the buffer of later steps in the same epoch. hone's measurement of a candidate is its gate score
 * (for a discovery task, its rollout's best; SkillOpt's selection split), and the current skill's own measurement is
 * the train rollout the analyst reads. SkillOpt's slow update and meta skill (epoch-boundary extras) are not ported.
 */
export const skillopt: Method<Params> = {
  name: "skillopt",
  summary:
    "SkillOpt: bounded edits (cosine edit budget) to one skill document, kept only on strictly better validation, rejected edits fed back",
  edits: "skill",
  params,
  derivedDefaults: { skill: { rule: "the first skill", words: "the seed harness's first skill" } },
  startFrom: "seed",
  proposalsPerRound: () => 1,
  async propose(ctx) {
    const current = currentSkill(ctx.archive, ctx.round);
    if (!current) return [];
    const p = ctx.params;
    const name = skillName(ctx);
    const before = componentTexts(ctx.files(current.id))[`skill_body.${name}`] ?? "";
    const step = ctx.round;
    const budget = editBudget(step, p.total_steps, p.lr_scheduler, p.learning_rate, p.min_learning_rate);
    const notes = candidateRollouts(current, 1)[0];
    const failed = notes?.improved !== true;
    const messages = analystMessages({
      skillName: name,
      skill: before,
      budget,
      // The buffer holds evaluator reasons and earlier model output: fences broken up, size bounded.
      buffer: quoted(formatStepBuffer(stepBuffer(ctx.archive, step, p)), 20_000),
      trajectories: [trajectoryText(ctx, current, notes)],
      failed,
    });
    const reply = await ctx.proposer.complete(messages, { maxTokens: p.max_tokens, sample: 0 });
    const read = readEdits(reply.text, name, before);
    const edits = clipEdits(read.edits, budget);
    const applied = applyEdits(before, edits);
    const after = applied.skill.trim();
    const f = failures(ctx.task.id, notes);
    const memo: SkillOptMemo = {
      step,
      epoch: Math.floor((step - 1) / p.steps_per_epoch),
      current: current.id,
      skill: name,
      budget,
      edits: edits.map((e) => ({ op: e.op, target: e.target?.slice(0, 2000), content: e.content?.slice(0, 2000) })),
      statuses: applied.statuses,
      source: read.source,
      n_total: f.nTotal,
      n_fail: f.nFail,
      failure_patterns: f.patterns,
    };
    const changed = after !== before.trim() && after.length > 0;
    const checked = changed ? checkedSpec({ skill_body: { [name]: after } }) : { spec: undefined, problem: "no edit applied" };
    const what = `${edits.length} of ${read.edits.length} edit(s) (budget ${budget}) to skills/${name}`;
    return [
      {
        parents: [current.id],
        spec: checked.spec,
        rationale: checked.problem
          ? `SkillOpt step ${step}: ${what} refused before the gate: ${checked.problem} (${applied.statuses.join(", ") || "no edits"})`
          : `SkillOpt step ${step}: ${what} from ${current.id}'s ${failed ? "failed" : "successful"} rollout`,
        sample: { messages, completion: reply.text },
        state: { skillopt: memo },
      },
    ];
  },
  keep(archive, candidate, p): KeepDecision {
    if (candidate.id === "r00-seed") return { keep: true, rule: "seed", reason: "the seed's skill is SkillOpt's initial skill" };
    const memo = skilloptMemo(candidate);
    if (!memo) return { keep: false, rule: "skillopt_no_state", reason: "no SkillOpt record for this candidate" };
    const g = gateAction(archive, candidate, p);
    const keep = g.action !== "reject";
    return {
      keep,
      rule: p.use_gate ? "skillopt_gate_strict" : "skillopt_gate_off",
      reason: `${g.action}: ${candidate.measured?.score ?? "no score"} ${keep ? "beats" : "does not beat"} the current skill ${memo.current} (${Number.isFinite(g.current) ? g.current : "none"}, oriented)`,
    };
  },
  choose: (archive) => bestMeasured(archive, true),
};
