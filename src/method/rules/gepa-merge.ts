/**
 * GEPA's merge rules (system-aware crossover), ported from gepa-ai/gepa at commit
 * b265bf9ca77fd8e8d82039d9f74911b8780fe1ce: src/gepa/proposer/merge.py and the merge branch of src/gepa/core/engine.py.
 *
 * - Merge candidates: the non-dominated candidates of the frontier (`find_dominator_programs`).
 * - A pair (i, j), i < j, may merge when neither is an ancestor of the other and they share an ancestor a that
 *   (1) has not been merged with this pair before, (2) scores no higher than either (aggregate), and (3) has a
 *   "desirable" component: one where a equals i or j and i differs from j. The ancestor is drawn ∝ its aggregate.
 *   Up to 10 pair draws per attempt and 10 attempts.
 * - The merged candidate starts from a; per component: if a equals one side and the sides differ, take the other side;
 *   if both differ from a, take the side with the higher aggregate (a coin flip on a tie); if both sides are equal,
 *   take i's. A merge whose (i, j, chosen sources) was already produced is skipped; so is a pair whose validation
 *   scores share fewer than `val_overlap_floor` = 5 keys.
 * - It is evaluated on a subsample of 5 common keys: ⌈5/3⌉ each from where i wins, where j wins, and the ties, then
 *   topped up from the unused keys; it is accepted when Σ new ≥ max(Σ i, Σ j) over that subsample, and then evaluated
 *   in full.
 * - Schedule: each accepted reflective child makes one merge due (while fewer than `max_merge_invocations` = 5 merges
 *   were accepted); a merge is tried only in the iteration after a new candidate was found; an accepted merge uses one
 *   due merge and replaces that iteration's reflective step; a rejected merge uses none but also skips the step; when
 *   no mergeable pair is found the reflective step runs.
 *
 * Deviation: draws use a seeded `Rand` (not Python's `random.Random`), and an ancestor whose aggregate weights are all
 * zero is drawn uniformly (Python's `random.choices` raises there).
 */
import { type Front, paretoParentWeights } from "./gepa.ts";
import { below, choice, type Rand, sampleDistinct, sum, weightedIndex } from "./sample.ts";

export type Components = Readonly<Record<string, string>>;

/** What merges were already tried: (i, j, ancestor) triplets and (i, j, sources) descriptions. */
export interface MergeLog {
  triplets: [number, number, number][];
  descriptions: [number, number, number[]][];
}

export const emptyMergeLog = (): MergeLog => ({ triplets: [], descriptions: [] });

/** The candidates merges may draw from: those left on the frontier after dominated ones are removed. */
export function mergeCandidates(front: Front, aggregates: readonly number[]): number[] {
  return [...paretoParentWeights(front, aggregates).keys()].sort((a, b) => a - b);
}

/** Every ancestor of `node` (parents may be null for a seed). */
export function ancestors(node: number, parents: readonly (readonly (number | null)[])[]): Set<number> {
  const found = new Set<number>();
  const stack = [node];
  while (stack.length) {
    for (const p of parents[stack.pop() as number] ?? []) {
      if (p !== null && !found.has(p)) {
        found.add(p);
        stack.push(p);
      }
    }
  }
  return found;
}

/** Some component where the ancestor equals one side and the two sides differ. */
export function hasDesirableComponent(programs: readonly Components[], ancestor: number, i: number, j: number): boolean {
  const [a, x, y] = [programs[ancestor] ?? {}, programs[i] ?? {}, programs[j] ?? {}];
  return Object.keys(a).some((name) => (a[name] === x[name] || a[name] === y[name]) && x[name] !== y[name]);
}

const logged = (log: MergeLog, i: number, j: number, a: number) =>
  log.triplets.some(([x, y, z]) => x === i && y === j && z === a);

/** The common ancestors of i and j that a merge may start from (GEPA's `filter_ancestors`). */
export function eligibleAncestors(
  i: number,
  j: number,
  common: Iterable<number>,
  log: MergeLog,
  aggregates: readonly number[],
  programs: readonly Components[],
): number[] {
  const score = (p: number) => aggregates[p] ?? Number.NEGATIVE_INFINITY;
  return [...common].filter(
    (a) => !logged(log, i, j, a) && !(score(a) > score(i) || score(a) > score(j)) && hasDesirableComponent(programs, a, i, j),
  );
}

function drawAncestor(candidates: number[], aggregates: readonly number[], rand: Rand): number {
  const weights = candidates.map((a) => Math.max(0, aggregates[a] ?? 0));
  return candidates[sum(weights) > 0 ? weightedIndex(weights, rand) : below(candidates.length, rand)] as number;
}

/** A mergeable (i, j, ancestor) triplet, or undefined after `maxAttempts` pair draws (GEPA's `find_common_ancestor_pair`). */
export function findMergeTriplet(
  rand: Rand,
  parents: readonly (readonly (number | null)[])[],
  candidates: readonly number[],
  log: MergeLog,
  aggregates: readonly number[],
  programs: readonly Components[],
  maxAttempts = 10,
): [number, number, number] | undefined {
  for (let t = 0; t < maxAttempts; t++) {
    if (candidates.length < 2) return undefined;
    let [i, j] = sampleDistinct(candidates, 2, rand) as [number, number];
    if (i === j) continue;
    if (j < i) [i, j] = [j, i];
    const ai = ancestors(i, parents);
    const aj = ancestors(j, parents);
    if (ai.has(j) || aj.has(i)) continue;
    const common = eligibleAncestors(
      i,
      j,
      [...ai].filter((a) => aj.has(a)),
      log,
      aggregates,
      programs,
    );
    if (common.length) return [i, j, drawAncestor(common, aggregates, rand)];
  }
  return undefined;
}

/** The merged candidate and, per component (in the ancestor's order), which side it came from. */
export function mergeComponents(
  ancestor: number,
  i: number,
  j: number,
  programs: readonly Components[],
  aggregates: readonly number[],
  rand: Rand,
): { program: Record<string, string>; sources: number[] } {
  const [a, x, y] = [programs[ancestor] ?? {}, programs[i] ?? {}, programs[j] ?? {}];
  const program: Record<string, string> = { ...a };
  const sources: number[] = [];
  const si = aggregates[i] ?? 0;
  const sj = aggregates[j] ?? 0;
  for (const name of Object.keys(a)) {
    let from: number;
    if ((a[name] === x[name] || a[name] === y[name]) && x[name] !== y[name]) from = a[name] === x[name] ? j : i;
    else if (a[name] !== x[name] && a[name] !== y[name]) from = si > sj ? i : sj > si ? j : choice([i, j], rand);
    else from = i;
    program[name] = (from === i ? x : y)[name] as string;
    sources.push(from);
  }
  return { program, sources };
}

export interface MergeInput {
  aggregates: readonly number[];
  candidates: readonly number[];
  programs: readonly Components[];
  parents: readonly (readonly (number | null)[])[];
  /** Keys each candidate was scored on, for the overlap floor. */
  scores: readonly Readonly<Record<string, number>>[];
  valOverlapFloor?: number;
  maxAttempts?: number;
}

/** One merge proposal (GEPA's `sample_and_attempt_merge_programs_by_common_predictors`); records it in `log`. */
export function proposeMerge(
  input: MergeInput,
  log: MergeLog,
  rand: Rand,
): { program: Record<string, string>; i: number; j: number; ancestor: number } | undefined {
  const { aggregates, candidates, programs, parents, scores } = input;
  const floor = input.valOverlapFloor ?? 5;
  const attempts = input.maxAttempts ?? 10;
  if (candidates.length < 2 || parents.length < 3) return undefined;
  for (let t = 0; t < attempts; t++) {
    const triplet = findMergeTriplet(rand, parents, candidates, log, aggregates, programs, attempts);
    if (!triplet) continue;
    const [i, j, ancestor] = triplet;
    if (logged(log, i, j, ancestor)) continue;
    const { program, sources } = mergeComponents(ancestor, i, j, programs, aggregates, rand);
    const key = sources.join(",");
    if (log.descriptions.some(([x, y, s]) => x === i && y === j && s.join(",") === key)) continue;
    const overlap = Object.keys(scores[i] ?? {}).filter((k) => k in (scores[j] ?? {})).length;
    if (overlap < floor) continue;
    log.descriptions.push([i, j, sources]);
    log.triplets.push([i, j, ancestor]);
    return { program, i, j, ancestor };
  }
  return undefined;
}

/** The keys a merge is first evaluated on (GEPA's `select_eval_subsample_for_merged_program`). */
export function mergeSubsample(
  a: Readonly<Record<string, number>>,
  b: Readonly<Record<string, number>>,
  rand: Rand,
  n = 5,
): string[] {
  const common = Object.keys(a).filter((k) => k in b);
  const buckets = [
    common.filter((k) => (a[k] as number) > (b[k] as number)),
    common.filter((k) => (b[k] as number) > (a[k] as number)),
    common.filter((k) => a[k] === b[k]),
  ];
  const each = Math.max(1, Math.ceil(n / 3));
  const selected: string[] = [];
  for (const bucket of buckets) {
    if (selected.length >= n) break;
    const available = bucket.filter((k) => !selected.includes(k));
    const take = Math.min(available.length, each, n - selected.length);
    if (take > 0) selected.push(...sampleDistinct(available, take, rand));
  }
  const remaining = n - selected.length;
  if (remaining > 0) {
    const unused = common.filter((k) => !selected.includes(k));
    if (unused.length >= remaining) selected.push(...sampleDistinct(unused, remaining, rand));
    else if (common.length) for (let r = 0; r < remaining; r++) selected.push(choice(common, rand));
  }
  return selected.slice(0, n);
}

/** A merge is accepted when its subsample sum reaches the better parent's: Σ new ≥ max(Σ i, Σ j). */
export function acceptMerge(parentSums: readonly number[], after: readonly number[]): boolean {
  const bar = parentSums.length ? Math.max(...parentSums) : Number.NEGATIVE_INFINITY;
  return sum(after) >= bar;
}

/** The merge schedule's counters (`merges_due`, `total_merges_tested`, `last_iter_found_new_program`). */
export interface MergeSchedule {
  due: number;
  accepted: number;
  foundNew: boolean;
  max: number;
}

export const mergeSchedule = (max = 5): MergeSchedule => ({ due: 0, accepted: 0, foundNew: false, max });

/** After the reflective step: an accepted child makes one more merge due (while fewer than `max` were accepted). */
export const afterReflective = (s: MergeSchedule, accepted: boolean): MergeSchedule => ({
  ...s,
  foundNew: accepted,
  due: accepted && s.accepted < s.max ? s.due + 1 : s.due,
});

/** Whether this iteration tries a merge first. */
export const mergeDue = (s: MergeSchedule): boolean => s.due > 0 && s.foundNew;

/** After a merge attempt (accepted or not); `foundNew` is cleared either way. */
export const afterMerge = (s: MergeSchedule, accepted: boolean): MergeSchedule =>
  accepted ? { ...s, due: s.due - 1, accepted: s.accepted + 1, foundNew: false } : { ...s, foundNew: false };
