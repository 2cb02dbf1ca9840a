/**
 * Meta-Harness's bookkeeping rules (Lee, Nair, Zhang, Lee, Khattab, Finn, arXiv 2603.28052), ported from
 * stanford-iris-lab/meta-harness at commit 95175f70c758dd1145b395edfe8b67e6f9d80fbd:
 * reference_examples/terminal_bench_2/meta_harness.py (`compute_pass_rates`, `update_frontier`,
 * `update_evolution_summary`) and reference_examples/text_classification/benchmark.py (`compute_pareto_frontier`, the
 * per-dataset best of `print_frontier`) with meta_harness.py (its summary row fields).
 *
 * - Pass rates (TB2): per task, trials with reward > 0 over trials; the average is flat: all passes over all trials.
 * - Frontier (`frontier_val.json`): for each task the best candidate and its score, replaced only by a strictly better
 *   one (the first to reach a score keeps it), plus `_best`, the candidate with the strictly best average.
 * - Pareto list (text classification: accuracy against context length): points sorted by score descending, then cost
 *   ascending; a point is kept when its cost is ≤ the lowest cost kept so far, so an equal-cost point with a lower score
 *   stays (upstream's ≤).
 * - Per-task best from all results (text classification): the highest score, the lower cost on a tie, then the first.
 * - `evolution_summary.jsonl`: one row per candidate of an iteration, appended after the frontier was updated (so a new
 *   best shows delta 0): iteration, the candidate, its average (rounded to 3) and per-task scores (rounded to 3),
 *   hypothesis, axis, changes, delta = round(avg − frontier best, 3) or null when the best is 0, outcome
 *   "45.0% (+2.5%)" or "failed", and the timing on the iteration's first row.
 *
 * hone's names: TB2's `agent` / text classification's `system` is `candidate`; `avg_pass_rate` / `avg_val` is
 * `avg_score`; `import_path` is dropped (a candidate's files are in candidates/<id>/). Deviations: scores may be
 * minimised (a direction flips "better"); a candidate is "failed" when it has no score, and its delta is null (upstream:
 * an average of 0, so its delta is minus the best); the outcome is shown in percent only for fractional scores
 * (`percent`, default on, as upstream).
 */
import type { Direction } from "../reward.ts";
import { pyFixed, pyPercent, pyRound, pySignedPercent } from "./pyfmt.ts";
import { strictlyBetter } from "./sample.ts";

/** TB2's pass rates: per task (reward > 0 counts as a pass) and the flat average over all trials. */
export function passRates(taskRewards: Readonly<Record<string, readonly number[]>>): {
  perTask: Record<string, number>;
  avg: number;
} {
  const perTask: Record<string, number> = {};
  let passes = 0;
  let trials = 0;
  for (const [task, rewards] of Object.entries(taskRewards)) {
    const p = rewards.filter((r) => r > 0).length;
    perTask[task] = rewards.length ? p / rewards.length : 0;
    passes += p;
    trials += rewards.length;
  }
  return { perTask, avg: trials ? passes / trials : 0 };
}

export interface CandidateResult {
  perTask: Readonly<Record<string, number>>;
  avg: number;
}

export interface Frontier {
  tasks: Record<string, { candidate: string; score: number }>;
  best?: { candidate: string; avg: number };
}

/** The frontier after an iteration's results (in the order given), as TB2's `update_frontier`. */
export function updateFrontier(
  frontier: Frontier,
  results: readonly (readonly [string, CandidateResult])[],
  direction: Direction = "maximize",
): Frontier {
  const out: Frontier = { tasks: { ...frontier.tasks }, ...(frontier.best ? { best: { ...frontier.best } } : {}) };
  for (const [candidate, r] of results) {
    for (const [task, score] of Object.entries(r.perTask)) {
      const cur = out.tasks[task];
      if (Number.isFinite(score) && (!cur || strictlyBetter(score, cur.score, direction))) out.tasks[task] = { candidate, score };
    }
    if (Number.isFinite(r.avg) && (!out.best || strictlyBetter(r.avg, out.best.avg, direction)))
      out.best = { candidate, avg: r.avg };
  }
  return out;
}

export interface ParetoPoint {
  candidate: string;
  score: number;
  /** Lower is better (context length, tokens, cost). */
  cost: number;
}

/** The text-classification Pareto list: best score first, kept while the cost does not rise. */
export function paretoList(points: readonly ParetoPoint[], direction: Direction = "maximize"): ParetoPoint[] {
  const s = direction === "maximize" ? -1 : 1;
  const sorted = [...points].sort((a, b) => s * (a.score - b.score) || a.cost - b.cost);
  const out: ParetoPoint[] = [];
  let minCost = Number.POSITIVE_INFINITY;
  for (const p of sorted) {
    if (p.cost <= minCost) {
      out.push(p);
      minCost = p.cost;
    }
  }
  return out;
}

/** The best candidate of each task from all results: the best score, then the lower cost, then the first. */
export function bestPerTask(
  results: readonly { candidate: string; task: string; score: number; cost?: number }[],
  direction: Direction = "maximize",
): Record<string, { candidate: string; score: number; cost: number }> {
  const out: Record<string, { candidate: string; score: number; cost: number }> = {};
  for (const r of results) {
    const cost = r.cost ?? 0;
    const cur = out[r.task];
    if (!cur || strictlyBetter(r.score, cur.score, direction) || (r.score === cur.score && cost < cur.cost))
      out[r.task] = { candidate: r.candidate, score: r.score, cost };
  }
  return out;
}

export interface ProposedCandidate {
  candidate: string;
  hypothesis?: string;
  axis?: string;
  changes?: string;
}

export interface EvolutionRow {
  iteration: number;
  candidate: string;
  avg_score: number | null;
  per_task: Record<string, number>;
  hypothesis: string;
  axis: string;
  changes: string;
  delta: number | null;
  outcome: string;
  timing_s?: { propose: number; bench: number | null };
}

/** The `evolution_summary.jsonl` rows of one iteration; `bestAvg` is the frontier's best average after the update. */
export function evolutionRows(
  iteration: number,
  candidates: readonly ProposedCandidate[],
  results: Readonly<Record<string, CandidateResult | undefined>>,
  bestAvg: number | undefined,
  o: { timing?: { propose: number; bench?: number }; percent?: boolean } = {},
): EvolutionRow[] {
  const percent = o.percent ?? true;
  const best = bestAvg ?? 0;
  return candidates.map((c, i) => {
    const r = results[c.candidate];
    const scored = r !== undefined && Number.isFinite(r.avg);
    const avg = scored ? r.avg : 0;
    const gap = avg - best;
    const row: EvolutionRow = {
      iteration,
      candidate: c.candidate,
      avg_score: scored ? pyRound(avg, 3) : null,
      per_task: Object.fromEntries(Object.entries(r?.perTask ?? {}).map(([k, v]) => [k, pyRound(v, 3)])),
      hypothesis: c.hypothesis ?? "",
      axis: c.axis ?? "?",
      changes: c.changes ?? "",
      delta: scored && best ? pyRound(gap, 3) : null,
      outcome: !scored
        ? "failed"
        : percent
          ? `${pyPercent(avg, 1)} (${pySignedPercent(gap, 1)})`
          : `${pyFixed(avg, 4)} (${gap < 0 ? "" : "+"}${pyFixed(gap, 4)})`,
    };
    if (i === 0 && o.timing)
      row.timing_s = {
        propose: pyRound(o.timing.propose, 1),
        bench: o.timing.bench === undefined ? null : pyRound(o.timing.bench, 1),
      };
    return row;
  });
}
