// Scores on DGM's and ADAS's scale. Their rules were written for accuracies in [0, 1] (DGM's sigmoid is centred on
// 0.5, its noise leeway is 0.1, ADAS shows fitness in percent and rejects "all 0 accuracy"); hone's tasks also have
// scores in their own units (circle packing's sum of radii) and minimised metrics.
import type { Archive, Direction, TaskBrief } from "../method.ts";

/**
 * - `unit`: the scores are fractions in [0, 1] (QA benchmarks' metrics): used as they are, 1 − s when minimised.
 * - `relative`: the task's own units, relative to the initial harness: n = 0.5 + (s − s₀)/(2·|s₀|) in the task's
 *   direction, clamped to [0, 1], s₀ the seed candidate's score. The initial agent sits at DGM's midpoint 0.5, a
 *   candidate twice as good (or with half the error) at 1, and DGM's leeway of 0.1 is 20% of the initial score. It
 *   falls back to `range` while s₀ is unknown or 0.
 * - `range`: min–max over every score measured so far in the run, oriented so that 1 is the best measured and 0 the
 *   worst (all equal: 0.5). It moves as the archive grows.
 * Both are computed from the archive a rule is given, so resume and replay compute the same values.
 */
export type ScoreScale = "unit" | "relative" | "range";

/** `auto` picks `unit` for QA benchmarks and `relative` for discovery tasks. */
export const scaleOf = (wanted: "auto" | ScoreScale, task: TaskBrief): ScoreScale =>
  wanted !== "auto" ? wanted : task.kind === "qa" ? "unit" : "relative";

const SEED = "r00-seed";

/** Every measured, non-null score of the archive. */
export function measuredScores(archive: Archive): number[] {
  const out: number[] = [];
  for (const c of archive.candidates) {
    const s = c.measured?.score;
    if (c.status === "measured" && typeof s === "number" && Number.isFinite(s)) out.push(s);
  }
  return out;
}

export const unitNormaliser = (direction: Direction) => (direction === "maximize" ? (s: number) => s : (s: number) => 1 - s);

function rangeNormaliser(scores: readonly number[], sign: number): (s: number) => number {
  const o = scores.map((s) => sign * s);
  const lo = Math.min(...o);
  const hi = Math.max(...o);
  if (!(hi > lo)) return () => 0.5;
  return (s) => Math.min(1, Math.max(0, (sign * s - lo) / (hi - lo)));
}

/** The function mapping a score to [0, 1] on `scale`, from what the archive has measured. */
export function normaliser(scale: ScoreScale, archive: Archive): (s: number) => number {
  if (scale === "unit") return unitNormaliser(archive.direction);
  const sign = archive.direction === "maximize" ? 1 : -1;
  const s0 = archive.candidates.find((c) => c.id === SEED)?.measured?.score;
  if (scale === "relative" && typeof s0 === "number" && Number.isFinite(s0) && s0 !== 0)
    return (s) => Math.min(1, Math.max(0, 0.5 + (sign * (s - s0)) / (2 * Math.abs(s0))));
  return rangeNormaliser(measuredScores(archive), sign);
}
