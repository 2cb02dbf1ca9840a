// Rewards and advantages of a round's slots: invalid and repaired proposals are charged the minimum; a candidate
// whose paired control is missing, failed or mismatched is unmeasured (no reward), never scored against a fallback.
import { advantages, gapReward, REWARD_MIN } from "../method/reward.ts";
import { type CandidateRow, setRewards } from "../store/candidates.ts";
import type { DecisionRow } from "../store/decisions.ts";
import { type RolloutRow, roundRollouts } from "../store/rollouts.ts";
import type { Incumbent, RunContext } from "./optimize-context.ts";

const CONTROL_RULES = new Set(["control_missing", "control_failed", "control_mismatch"]);

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
  const values = cands.map((c): number | null => {
    if (c.status !== "valid") return REWARD_MIN;
    if (CONTROL_RULES.has(decisions.find((d) => d.candidate_id === c.id)?.rule ?? "")) return null;
    const mine = rows.find((r) => r.candidate_id === c.id && r.kind === "candidate");
    if (!settings.paired) return gapReward(own(mine), inc.score, task.reference?.value, task.direction);
    const control = rows.find((r) => r.candidate_id === c.id && r.kind === "parent");
    return gapReward(own(mine), own(control) ?? control?.best_score ?? undefined, task.reference?.value, task.direction);
  });
  const measured = values.flatMap((v, i) => (v === null ? [] : [i]));
  const adv = advantages(measured.map((i) => values[i] as number));
  const advOf = new Map(measured.map((i, j) => [i, adv[j] ?? null]));
  const write = () =>
    setRewards(
      ctx.db,
      cands.map((c, i) => ({
        id: c.id,
        reward: values[i] ?? null,
        advantage: advOf.get(i) ?? null,
        score: own(rows.find((r) => r.candidate_id === c.id && r.kind === "candidate")) ?? null,
      })),
    );
  return { values, write };
}
