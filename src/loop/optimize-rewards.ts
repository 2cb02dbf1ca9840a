// Rewards and advantages of a HarnessTTT round's slots, by the released rules (method/reward.ts): the soft-capped
// reward of each slot's measured score against its baseline, then the group's advantages (zero signal, ties, τ from
// the range). Invalid and repaired proposals are charged the minimum; a candidate whose paired control is missing,
// failed or mismatched is unmeasured (no reward, left out of the group), never scored against a fallback.
import { groupAdvantages, REWARD_MIN, softCapReward } from "../method/reward.ts";
import { type CandidateRow, setRewards } from "../store/candidates.ts";
import type { DecisionRow } from "../store/decisions.ts";
import { type RolloutRow, roundRollouts } from "../store/rollouts.ts";
import type { Direction } from "../task/discovery-task.ts";
import type { Incumbent, RunContext } from "./optimize-context.ts";

/** One slot as the reward sees it: its proposal's status, and its score (null: unmeasurable) against its baseline. */
export interface SlotOutcome {
  status: string;
  score: number | undefined | null;
  baseline: number | undefined;
  /** Paired: false when the candidate's own rollout gave no score (charged, but left out of the group's range). */
  measured?: boolean;
}

export interface SlotCredit {
  rewards: (number | null)[];
  advantages: (number | null)[];
}

/** Rewards and advantages per slot (null for an unmeasurable slot, which is left out of the group). */
export function slotRewards(slots: readonly SlotOutcome[], reference: number | undefined, direction: Direction): SlotCredit {
  const measured = slots.flatMap((s, i) => (s.score === null ? [] : [i]));
  const group = measured.map((i) => {
    const s = slots[i] as SlotOutcome;
    const valid = s.status === "valid" || s.status === "repaired";
    const reward = valid ? softCapReward(s.score ?? undefined, s.baseline, reference, direction) : REWARD_MIN;
    return { reward, valid, repaired: s.status === "repaired", measured: s.measured };
  });
  const g = groupAdvantages(group);
  const rewards: (number | null)[] = slots.map(() => null);
  const advantages: (number | null)[] = slots.map(() => null);
  measured.forEach((i, j) => {
    rewards[i] = g.rewards[j] ?? null;
    advantages[i] = g.advantages[j] ?? null;
  });
  return { rewards, advantages };
}

const CONTROL_RULES = new Set(["control_missing", "control_failed", "control_mismatch"]);

/** A discovery round's credit: each slot's own best score against the incumbent's (or, paired, its control's). */
export function roundRewards(
  ctx: RunContext,
  round: number,
  inc: Incumbent,
  cands: CandidateRow[],
  decisions: DecisionRow[],
): { values: (number | null)[]; write: () => void } {
  const { task, settings } = ctx;
  const rows = roundRollouts(ctx.db, ctx.runId, round);
  const own = (r: RolloutRow | undefined) =>
    r && r.status === "completed" ? ((task.direction === "maximize" ? r.own_max : r.own_min) ?? undefined) : undefined;
  const outcomes = cands.map((c): SlotOutcome => {
    const mine = own(rows.find((r) => r.candidate_id === c.id && r.kind === "candidate"));
    if (c.status !== "valid" && c.status !== "repaired") return { status: c.status, score: undefined, baseline: inc.score };
    if (CONTROL_RULES.has(decisions.find((d) => d.candidate_id === c.id)?.rule ?? ""))
      return { status: c.status, score: null, baseline: undefined };
    if (!settings.paired) return { status: c.status, score: mine, baseline: inc.score };
    const control = rows.find((r) => r.candidate_id === c.id && r.kind === "parent");
    const baseline = own(control) ?? control?.best_score ?? undefined;
    return { status: c.status, score: mine, baseline, measured: mine !== undefined };
  });
  const credit = slotRewards(outcomes, task.reference?.value, task.direction);
  const write = () =>
    setRewards(
      ctx.db,
      cands.map((c, i) => ({
        id: c.id,
        reward: credit.rewards[i] ?? null,
        advantage: credit.advantages[i] ?? null,
        score: own(rows.find((r) => r.candidate_id === c.id && r.kind === "candidate")) ?? null,
      })),
    );
  return { values: credit.rewards, write };
}
