// Rewards and advantages of a HarnessTTT round on a QA benchmark, by the same released rules as on discovery tasks
// (optimize-rewards.ts, method/reward.ts): each slot's train mean against the incumbent's on the same questions,
// soft-capped (3·tanh(r/3)) against accuracy's ceiling of 1 as the reference, then the group's advantages
// (0.7·leave-one-out + 0.3·softmax). Refused proposals are charged the minimum; a candidate every task of which failed
// for infrastructure reasons is unmeasured (no reward, left out of the group).
import type { Archive } from "../method/method.ts";
import { type CandidateRow, setRewards } from "../store/candidates.ts";
import { type SlotOutcome, slotRewards } from "./optimize-rewards.ts";
import type { QAIncumbent } from "./qa-context.ts";

/** The best accuracy a QA harness can reach: the reference a QA reward is scaled by. */
export const QA_REFERENCE = 1;

/** A slot's outcome as the reward reads it, from the archive the round was decided on. */
export function qaSlotOutcome(archive: Archive, c: CandidateRow, inc: QAIncumbent): SlotOutcome {
  const baseline = inc.score ?? undefined;
  if (c.status !== "valid" && c.status !== "repaired") return { status: c.status, score: undefined, baseline };
  const m = archive.candidates.find((x) => x.id === c.id);
  return { status: c.status, score: m?.status === "measured" ? (m.measured?.score ?? null) : null, baseline };
}

/** A QA round's credit per slot, and the write that records it with the round's decisions. */
export function qaRoundRewards(
  archive: Archive,
  cands: CandidateRow[],
  inc: QAIncumbent,
  db: Parameters<typeof setRewards>[0],
): { values: (number | null)[]; advantages: (number | null)[]; write: () => void } {
  const outcomes = cands.map((c) => qaSlotOutcome(archive, c, inc));
  const credit = slotRewards(outcomes, QA_REFERENCE, "maximize");
  const write = () =>
    setRewards(
      db,
      cands.map((c, i) => ({
        id: c.id,
        reward: credit.rewards[i] ?? null,
        advantage: credit.advantages[i] ?? null,
        score: outcomes[i]?.score ?? null,
      })),
    );
  return { values: credit.rewards, advantages: credit.advantages, write };
}
