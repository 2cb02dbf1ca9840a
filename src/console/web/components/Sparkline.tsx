import { bestSoFarByRound } from "../curve.ts";
import type { Round } from "../types.ts";

/** The best score so far by round, as a small line: enough to see at a glance whether a run is still climbing. */
export function Sparkline({
  scores,
  direction = "maximize",
}: {
  scores: [number | null, number | null][];
  direction?: "maximize" | "minimize";
}) {
  const rounds = scores.map(
    ([incumbent, best], round) => ({ round, status: "finished", incumbent_score: incumbent, best_score: best }) as Round,
  );
  const values = [...bestSoFarByRound(rounds, direction).values()];
  const [w, h] = [96, 22];
  if (values.length < 2) return <svg width={w} height={h} aria-hidden="true" />;
  const [lo, hi] = [Math.min(...values), Math.max(...values)];
  const y = (v: number) => (hi === lo ? h / 2 : h - 2 - ((v - lo) / (hi - lo)) * (h - 4));
  const points = values.map((v, i) => `${((i / (values.length - 1)) * (w - 4) + 2).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  return (
    <svg width={w} height={h} role="img" aria-label={`best so far over ${values.length} rounds`} data-testid="sparkline">
      <polyline points={points} fill="none" stroke="#1f5fbf" strokeWidth="1.6" />
    </svg>
  );
}
