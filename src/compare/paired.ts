import type { Direction } from "../measure/compare.ts";
import type { CellRecord } from "./cell.ts";
import { cellIdentityDifferences, identityConflicts } from "./comparable.ts";
import { differenceInterval, type Interval, type IntervalKind, meanOf, scaleOf, signOf, unscale } from "./intervals.ts";

/** One method against the baseline method on the same benchmark and harness. */
export interface PairedComparison {
  benchmark: string;
  harness: string;
  method: string;
  baseline: string;
  /** `refused`: the identities differ (see `differences`); `no_baseline`: the baseline method has no cell here. */
  status: "compared" | "refused" | "no_baseline";
  differences: string[];
  interval: IntervalKind;
  /** Pairs (task × seed, both measured), and pairs left out with why. */
  n: number;
  left_out: { seeds_unpaired: number[]; invalid_pairs: number };
  /** Mean of method − baseline per pair, signed so that positive is better. */
  mean_difference: number | null;
  ci95: Interval | null;
  /** Only where the interval excludes zero; otherwise null (no verdict). */
  verdict: "better" | "worse" | null;
}

/**
 * The differences per task and seed between a method's final choices and the baseline's, positive is better; with a
 * `scale`, of the scores divided by it (scores near ±1.8e308 differ by more than a double holds).
 */
export function pairedDifferences(
  method: readonly CellRecord[],
  baseline: readonly CellRecord[],
  direction: Direction,
  scale = 1,
): { diffs: number[]; seedsUnpaired: number[]; invalidPairs: number } {
  const base = new Map(baseline.map((r) => [r.seed, r]));
  const seen = new Set(method.map((r) => r.seed));
  const seedsUnpaired = [...method.filter((r) => !base.has(r.seed)), ...baseline.filter((r) => !seen.has(r.seed))]
    .map((r) => r.seed)
    .sort((a, b) => a - b);
  const diffs: number[] = [];
  let invalidPairs = 0;
  for (const r of [...method].sort((a, b) => a.seed - b.seed)) {
    const b = base.get(r.seed);
    if (!b) continue;
    const other = new Map(b.final.tasks.map((t) => [t.task, t]));
    for (const t of r.final.tasks) {
      const u = other.get(t.task);
      if (!u || !t.valid || !u.valid || t.score === null || u.score === null) invalidPairs++;
      else diffs.push(signOf(direction) * (t.score / scale - u.score / scale));
    }
  }
  return { diffs, seedsUnpaired, invalidPairs };
}

/** Compares a method's cell with the baseline's: refused unless every identity agrees, a verdict only off zero. */
export function comparePaired(
  method: readonly CellRecord[],
  baseline: readonly CellRecord[] | undefined,
  o: { baseline: string; interval: IntervalKind },
): PairedComparison {
  const first = method[0] as CellRecord;
  const out: PairedComparison = {
    benchmark: first.benchmark,
    harness: first.harness,
    method: first.method,
    baseline: o.baseline,
    status: "compared",
    differences: [],
    interval: o.interval,
    n: 0,
    left_out: { seeds_unpaired: [], invalid_pairs: 0 },
    mean_difference: null,
    ci95: null,
    verdict: null,
  };
  if (!baseline?.length) return { ...out, status: "no_baseline" };
  const differences = [
    ...identityConflicts(method.map((r) => r.identity)).map((d) => `within ${first.method}: ${d}`),
    ...identityConflicts(baseline.map((r) => r.identity)).map((d) => `within ${o.baseline}: ${d}`),
    ...cellIdentityDifferences((baseline[0] as CellRecord).identity, first.identity),
  ];
  if (differences.length > 0) return { ...out, status: "refused", differences };
  const direction = first.identity.measurement.task.direction as Direction;
  const scale = scaleOf([...method, ...baseline].flatMap((r) => r.final.tasks.map((t) => t.score ?? 0)));
  const { diffs, seedsUnpaired, invalidPairs } = pairedDifferences(method, baseline, direction, scale);
  // The verdict is read off the interval in scaled units, where it is exact; the numbers are shown in the scores' own.
  const scaled = differenceInterval(diffs, o.interval);
  const verdict = scaled === null ? null : scaled[0] > 0 ? "better" : scaled[1] < 0 ? "worse" : null;
  return {
    ...out,
    n: diffs.length,
    left_out: { seeds_unpaired: seedsUnpaired, invalid_pairs: invalidPairs },
    mean_difference: diffs.length ? unscale(meanOf(diffs), scale) : null,
    ci95: scaled && [unscale(scaled[0], scale), unscale(scaled[1], scale)],
    verdict,
  };
}
