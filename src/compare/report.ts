import type { Direction } from "../measure/compare.ts";
import { type CellCost, type CellRecord, COST_FIELDS, type MethodClaim, type TaskResult } from "./cell.ts";
import { evaluatorDifferences, identityConflicts } from "./comparable.ts";
import { type BandPoint, curveBand } from "./curve.ts";
import {
  type Estimate,
  type Interval,
  type IntervalKind,
  meanOf,
  scaleOf,
  signOf,
  tInterval,
  unscaleEstimate,
} from "./intervals.ts";
import { comparePaired, type PairedComparison } from "./paired.ts";
import { cellName } from "./plan.ts";
import type { CellFailure } from "./read-cells.ts";

/** One cell of the grid, over its seeds. */
export interface CellSummary {
  cell: string;
  benchmark: string;
  harness: string;
  method: string;
  /** Seeds with a record, and those of them whose test results count (every task valid). */
  seeds: number[];
  measured_seeds: number[];
  /** Seeds left out of the mean, with why. */
  excluded: { seed: number; reason: string }[];
  /** Tasks whose test score rests on fewer repeats than were made (the others gave no result), with why. */
  partial: { seed: number; side: "final" | "seed_harness"; task: string; reason: string }[];
  direction: Direction;
  /** The split hone measured on (`test`, or `test-heldout`: a test-only benchmark's test file without its search pool). */
  test_split: string;
  /** The scorer's metric a task's score carries (for QA: the benchmark's official one). */
  metric: string;
  budget: { unit: string; size: number };
  /** The test score of the method's final choice over seeds (each seed: the mean over the test tasks). */
  mean: number | null;
  ci95: Interval | null;
  /**
   * The seed harness on the same tasks and seeds (those in `mean`), and the final choice's gain over it (positive is
   * better), paired by seed.
   */
  seed_harness: Estimate;
  gain: Estimate;
  /** The cost of improving, mean per seed. */
  cost: CellCost;
  /** The seeds that spent more of the budget's unit than the budget (a mean under it can hide one), with what they spent. */
  over_budget: { seed: number; spent: number }[];
  /** The best-so-far band over seeds on the budget's x-axis (measured by hone on `curve_split`). */
  curve: BandPoint[];
  curve_split: string;
  test_seen_by_method: boolean;
  /** The method's own claims, per seed: kept apart, never drawn as hone's or used in a statistic. */
  method_reported: (MethodClaim & { seed: number })[];
  /** Where the seeds' identities differ: such a cell has no mean and is compared with nothing. */
  identity_conflicts: string[];
}

export interface CompareReport {
  baseline: string;
  interval: IntervalKind;
  cells: CellSummary[];
  comparisons: PairedComparison[];
  pending: string[];
  /** Cell × seed runs whose last attempt failed: no result, left out of every statistic, and said so. */
  failed: CellFailure[];
  /**
   * The evaluator versions (Python, numpy, sandbox) the cells were measured under, one line each, when they are not
   * all the same: named beside the results, never refused.
   */
  evaluator_differences?: string[];
}

export interface ReportOptions {
  baseline?: string;
  interval?: IntervalKind;
  pending?: string[];
  failed?: CellFailure[];
}

/**
 * A seed's test score: the mean over the tasks, or why there is none (a task without a valid result); with a `scale`,
 * of the scores divided by it.
 */
export function seedScore(tasks: readonly TaskResult[], scale = 1): { score: number } | { reason: string } {
  const bad = tasks.filter((t) => !t.valid || t.score === null);
  if (bad.length > 0) return { reason: `${bad.length} of ${tasks.length} test tasks without a valid result (${bad[0]?.task})` };
  return { score: meanOf(tasks.map((t) => (t.score as number) / scale)) };
}

const bySeed = (a: CellRecord, b: CellRecord) => a.seed - b.seed;

/** Summarises one cell's records (all of one benchmark × harness × method, one per seed). */
export function summarizeCell(records: readonly CellRecord[]): CellSummary {
  const recs = [...records].sort(bySeed);
  const first = recs[0] as CellRecord;
  const direction = first.identity.measurement.task.direction as Direction;
  const conflicts = identityConflicts(recs.map((r) => r.identity));
  // Scores near ±1.8e308 are summed and subtracted divided by a power of two (intervals.ts), the results shown in
  // their own units.
  const scale = scaleOf(recs.flatMap((r) => [...r.final.tasks, ...r.seed_harness.tasks].map((t) => t.score ?? 0)));
  const finals: number[] = [];
  const bases: number[] = [];
  const gains: number[] = [];
  const measured: number[] = [];
  const excluded: { seed: number; reason: string }[] = [];
  for (const r of recs) {
    const f = seedScore(r.final.tasks, scale);
    const b = seedScore(r.seed_harness.tasks, scale);
    if (!("score" in f)) {
      excluded.push({ seed: r.seed, reason: `final choice: ${f.reason}` });
      continue;
    }
    measured.push(r.seed);
    finals.push(f.score);
    // The seed harness over the seeds the test mean is over, so that gain = test − seed harness where both are there.
    if ("score" in b) {
      bases.push(b.score);
      gains.push(signOf(direction) * (f.score - b.score));
    }
  }
  const ok = conflicts.length === 0;
  const est = unscaleEstimate(tInterval(ok ? finals : []), scale);
  return {
    cell: cellName(first.benchmark, first.harness, first.method),
    benchmark: first.benchmark,
    harness: first.harness,
    method: first.method,
    seeds: recs.map((r) => r.seed),
    measured_seeds: measured,
    excluded,
    partial: partialTasks(recs),
    direction,
    test_split: first.identity.split,
    metric: first.identity.measurement.task.metric,
    budget: first.identity.budget,
    mean: est.mean,
    ci95: est.ci95,
    seed_harness: unscaleEstimate(tInterval(ok ? bases : []), scale),
    gain: unscaleEstimate(tInterval(ok ? gains : []), scale),
    cost: meanCost(recs.map((r) => r.cost)),
    over_budget: overBudgetSeeds(recs),
    curve: ok
      ? curveBand(
          recs.map((r) => r.curve.points),
          direction,
        )
      : [],
    curve_split: first.curve.split,
    test_seen_by_method: recs.some((r) => r.test_seen_by_method),
    method_reported: recs.flatMap((r) => r.method_reported.map((c) => ({ seed: r.seed, ...c }))),
    identity_conflicts: conflicts,
  };
}

/** Every valid task result that carries a reason: a score resting on fewer repeats than were made. */
function partialTasks(recs: readonly CellRecord[]): CellSummary["partial"] {
  return recs.flatMap((r) =>
    (["final", "seed_harness"] as const).flatMap((side) =>
      r[side].tasks
        .filter((t) => t.valid && t.reason)
        .map((t) => ({ seed: r.seed, side, task: t.task, reason: t.reason as string })),
    ),
  );
}

/** Each seed whose spend in the budget's unit went past the budget's size. */
function overBudgetSeeds(recs: readonly CellRecord[]): CellSummary["over_budget"] {
  return recs.flatMap((r) => {
    const spent = ({ ...r.cost } as Record<string, number | undefined>)[r.identity.budget.unit];
    return spent !== undefined && spent > r.identity.budget.size ? [{ seed: r.seed, spent }] : [];
  });
}

function meanCost(costs: readonly CellCost[]): CellCost {
  return Object.fromEntries(COST_FIELDS.map((k) => [k, meanOf(costs.map((c) => c[k]))])) as unknown as CellCost;
}

/** Groups records by cell, in order of benchmark, harness, then method (the baseline first). */
export function groupCells(records: readonly CellRecord[], baseline: string): CellRecord[][] {
  const groups = new Map<string, CellRecord[]>();
  for (const r of records) {
    const key = cellName(r.benchmark, r.harness, r.method);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const rank = (r: CellRecord) => [r.benchmark, r.harness, r.method === baseline ? "" : r.method];
  return [...groups.values()].sort((a, b) => {
    const x = rank(a[0] as CellRecord);
    const y = rank(b[0] as CellRecord);
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as string) < (y[i] as string) ? -1 : 1;
    return 0;
  });
}

/** The whole report: a summary per cell, and each method against the baseline on the same benchmark and harness. */
export function buildReport(records: readonly CellRecord[], o: ReportOptions = {}): CompareReport {
  const baseline = o.baseline ?? "random";
  const interval = o.interval ?? "t";
  const groups = groupCells(records, baseline);
  const cells = groups.map(summarizeCell);
  const comparisons: PairedComparison[] = [];
  groups.forEach((g, i) => {
    const s = cells[i] as CellSummary;
    if (s.method === baseline) return;
    const j = cells.findIndex((c) => c.benchmark === s.benchmark && c.harness === s.harness && c.method === baseline);
    comparisons.push(comparePaired(g, j < 0 ? undefined : (groups[j] as CellRecord[]), { baseline, interval }));
  });
  return {
    baseline,
    interval,
    cells,
    comparisons,
    pending: o.pending ?? [],
    failed: o.failed ?? [],
    evaluator_differences: evaluatorDifferences(records),
  };
}
