/**
 * SkillOpt's decision rules (microsoft/SkillOpt, arXiv 2605.23904), ported from microsoft/SkillOpt at commit
 * bdfdc30a8e17309c06cdbe8449f01bdecc120203: skillopt/optimizer/scheduler.py (the edit budget), optimizer/clip.py
 * (`rank_and_select`), optimizer/skill.py (`_apply_edit_with_report`), evaluation/gate.py (`select_gate_score`,
 * `evaluate_gate`), engine/trainer.py (`_format_step_buffer` and the step buffer), configs/_base_/default.yaml.
 *
 * - One skill document is the trainable state. Each step the optimizer proposes edits
 *   {op: append | insert_after | replace | delete, target, content}.
 * - Edit budget (the "learning rate"): at most `learning_rate` = 4 edits per step, annealed by `lr_scheduler` = cosine to
 *   `min_learning_rate` = 2 over the run: lr = min + ½(max − min)(1 + cos(π·t)), t = min(step, total)/total, rounded
 *   (Python's round) and at least min; `linear` interpolates; `constant` stays at max; `autonomous` has no limit (999).
 *   Over budget, an LLM ranks the edits and the top ones are kept; if the ranking is unusable the first `budget` are.
 * - Applying edits: in order; `append` adds at the end (before protected regions); `insert_after` adds a line after the
 *   line holding the target (appends when the target is missing); `replace` / `delete` change the first occurrence and
 *   are skipped when the target is missing; any edit whose target lies inside a protected region
 *   (<!-- SLOW_UPDATE_START/END -->, <!-- APPENDIX_START/END -->) is skipped, and markers in content are removed.
 * - Gate: accepted only when the candidate's validation score is strictly higher than the current skill's ("accept";
 *   "accept_new_best" when it also beats the best); otherwise "reject". With the gate off every candidate is accepted.
 * - Step buffer: within an epoch, one entry per step (action, failed/total rollouts, failure patterns), plus, for a
 *   rejected step, the rejected edits (op, target, content) and the score before → after; it is shown to the optimizer
 *   in every later step of the epoch and cleared when a new epoch starts (no size limit upstream; `maxEntries` here).
 */
import { pyFloatRepr, pyRound } from "./pyfmt.ts";

export type EditOp = "append" | "insert_after" | "replace" | "delete";

export interface SkillEdit {
  op: EditOp | string;
  target?: string;
  content?: string;
}

export type LrSchedule = "constant" | "linear" | "cosine" | "autonomous";

export const SKILLOPT_DEFAULTS = { maxEdits: 4, minEdits: 2, schedule: "cosine", noLimit: 999 } as const;

/** The edit budget of a 1-based step (`scheduler.step()`). */
export function editBudget(
  step: number,
  totalSteps: number,
  schedule: LrSchedule = SKILLOPT_DEFAULTS.schedule,
  max: number = SKILLOPT_DEFAULTS.maxEdits,
  min: number = SKILLOPT_DEFAULTS.minEdits,
): number {
  if (schedule === "autonomous") return SKILLOPT_DEFAULTS.noLimit;
  if (schedule === "constant" || totalSteps <= 1) return max;
  const t = Math.min(step, totalSteps) / totalSteps;
  const lr = schedule === "linear" ? max + (min - max) * t : min + 0.5 * (max - min) * (1 + Math.cos(Math.PI * t));
  return Math.max(min, pyRound(lr));
}

/** The edits kept under the budget: the ranker's valid, distinct indices in its order, else the first `budget`. */
export function clipEdits<T>(edits: readonly T[], budget: number, ranked?: readonly unknown[]): T[] {
  if (edits.length <= budget) return [...edits];
  const picked: T[] = [];
  const seen = new Set<number>();
  for (const i of ranked ?? []) {
    if (typeof i === "number" && Number.isInteger(i) && i >= 0 && i < edits.length && !seen.has(i)) {
      picked.push(edits[i] as T);
      seen.add(i);
    }
    if (picked.length >= budget) break;
  }
  return picked.length ? picked : edits.slice(0, budget);
}

const REGIONS = [
  ["<!-- SLOW_UPDATE_START -->", "<!-- SLOW_UPDATE_END -->"],
  ["<!-- APPENDIX_START -->", "<!-- APPENDIX_END -->"],
] as const;

const earliestProtected = (skill: string): number => {
  const at = REGIONS.map(([start]) => skill.indexOf(start)).filter((i) => i !== -1);
  return at.length ? Math.min(...at) : -1;
};

function inProtected(skill: string, target: string): boolean {
  const at = skill.indexOf(target);
  if (!target || at === -1) return false;
  return REGIONS.some(([start, end]) => {
    const s = skill.indexOf(start);
    const e = skill.indexOf(end);
    return s !== -1 && e !== -1 && s <= at && at < e + end.length;
  });
}

const stripMarkers = (s: string): string => REGIONS.flat().reduce((t, m) => t.replaceAll(m, ""), s);

const pyRstrip = (s: string): string => s.replace(/\s+$/, "");

function appendBeforeProtected(skill: string, content: string): { skill: string; protectedAfter: boolean } {
  const p = earliestProtected(skill);
  if (p === -1) return { skill: `${pyRstrip(skill)}\n\n${content}\n`, protectedAfter: false };
  return { skill: `${pyRstrip(skill.slice(0, p))}\n\n${content}\n\n${skill.slice(p)}`, protectedAfter: true };
}

/** One edit applied, with SkillOpt's status for it. */
export function applyEdit(skill: string, edit: SkillEdit): { skill: string; status: string } {
  const content = stripMarkers((edit.content ?? "").trim());
  const target = edit.target ?? "";
  if (target && inProtected(skill, target)) return { skill, status: "skipped_protected_region" };
  if (edit.op === "append") {
    const r = appendBeforeProtected(skill, content);
    return { skill: r.skill, status: r.protectedAfter ? "applied_append_before_protected_region" : "applied_append" };
  }
  if (edit.op === "insert_after") {
    if (!target || !skill.includes(target)) {
      const r = appendBeforeProtected(skill, content);
      const where = r.protectedAfter ? "before_protected_region" : "append";
      return { skill: r.skill, status: `applied_insert_after_fallback_${where}` };
    }
    const end = skill.indexOf(target) + target.length;
    const newline = skill.indexOf("\n", end);
    const at = newline === -1 ? skill.length : newline + 1;
    return { skill: `${skill.slice(0, at)}\n${content}\n${skill.slice(at)}`, status: "applied_insert_after" };
  }
  if (edit.op === "replace" || edit.op === "delete") {
    if (!target) return { skill, status: `skipped_${edit.op}_missing_target` };
    if (!skill.includes(target)) return { skill, status: `skipped_${edit.op}_target_not_found` };
    const at = skill.indexOf(target);
    const by = edit.op === "replace" ? content : "";
    return { skill: skill.slice(0, at) + by + skill.slice(at + target.length), status: `applied_${edit.op}` };
  }
  return { skill, status: "skipped_unknown_op" };
}

/** Edits applied in order (`apply_patch_with_report`). */
export function applyEdits(skill: string, edits: readonly SkillEdit[]): { skill: string; statuses: string[] } {
  const statuses: string[] = [];
  let s = skill;
  for (const e of edits) {
    const r = applyEdit(s, e);
    s = r.skill;
    statuses.push(r.status);
  }
  return { skill: s, statuses };
}

export type GateMetric = "hard" | "soft" | "mixed";

/** The score the gate compares (`select_gate_score`, without the optional semantic-density bonus). */
export function gateScore(hard: number, soft: number, metric: GateMetric = "hard", mixedWeight = 0.5): number {
  if (metric === "hard") return hard;
  if (metric === "soft") return soft;
  const w = Math.max(0, Math.min(1, mixedWeight));
  return (1 - w) * hard + w * soft;
}

export type GateAction = "accept_new_best" | "accept" | "reject" | "force_accept";

/** The validation gate (`evaluate_gate`): strictly better than the current skill, or rejected. */
export function gate(candidate: number, current: number, best: number, useGate = true): GateAction {
  if (!useGate) return "force_accept";
  if (candidate > current) return candidate > best ? "accept_new_best" : "accept";
  return "reject";
}

export interface FailurePattern {
  pattern: string;
  count: number;
  taskIds: string[];
}

export interface StepEntry {
  step: number;
  action: GateAction | string;
  nTotal?: number;
  nFail: number;
  failurePatterns: FailurePattern[];
  /** Only for a rejected step. */
  rejected?: { scoreBefore: number; scoreAfter: number; edits: SkillEdit[] };
}

/** The buffer after a step: the entry appended, the oldest dropped beyond `maxEntries`. */
export function pushStep(buffer: readonly StepEntry[], entry: StepEntry, maxEntries = Number.POSITIVE_INFINITY): StepEntry[] {
  const out = [...buffer, entry];
  return out.length > maxEntries ? out.slice(out.length - maxEntries) : out;
}

/** The step entry of a finished step: rejected edits are kept only when the gate rejected. */
export function stepEntry(
  s: Omit<StepEntry, "rejected">,
  edits: readonly SkillEdit[],
  scoreBefore: number,
  scoreAfter: number,
): StepEntry {
  if (!String(s.action).includes("reject") || edits.length === 0) return { ...s };
  const summary = edits.map((e) => ({ op: e.op ?? "?", content: String(e.content ?? ""), target: e.target ?? "" }));
  return { ...s, rejected: { scoreBefore, scoreAfter, edits: summary } };
}

const num = (x: number | undefined): string => (x === undefined ? "?" : Number.isInteger(x) ? String(x) : pyFloatRepr(x));

/** The buffer as the optimizer sees it (`_format_step_buffer`); empty for an empty buffer. */
export function formatStepBuffer(buffer: readonly StepEntry[]): string {
  if (buffer.length === 0) return "";
  const parts = [
    "Below is a summary of previous steps in this epoch. Use it to avoid repeating ineffective edits and to prioritise failure patterns that remain unsolved.\n",
  ];
  for (const e of buffer) {
    parts.push(`### Step ${e.step} — ${String(e.action).toUpperCase()} (${e.nFail}/${num(e.nTotal)} failed)`);
    for (const p of e.failurePatterns) parts.push(`  - "${p.pattern}" (×${p.count}, tasks: ${p.taskIds.join(", ")})`);
    if (e.rejected?.edits.length) {
      parts.push(`  Rejected edits (score ${pyFloatRepr(e.rejected.scoreBefore)} → ${pyFloatRepr(e.rejected.scoreAfter)}):`);
      e.rejected.edits.forEach((x, i) => {
        parts.push(
          x.target ? `    ${i + 1}. [${x.op}] target="${x.target}" → "${x.content}"` : `    ${i + 1}. [${x.op}] "${x.content}"`,
        );
      });
    }
  }
  return parts.join("\n");
}
