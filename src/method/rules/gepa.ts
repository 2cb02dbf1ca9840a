/**
 * GEPA's decision rules (Agrawal et al., arXiv 2507.19457), ported from gepa-ai/gepa at commit
 * b265bf9ca77fd8e8d82039d9f74911b8780fe1ce: src/gepa/core/state.py (frontier updates), src/gepa/gepa_utils.py
 * (`remove_dominated_programs`, `select_program_candidate_from_pareto_front`), src/gepa/strategies/candidate_selector.py,
 * acceptance.py, component_selector.py, batch_sampler.py, and the engine's `skip_perfect_score` check. The merge rules are
 * in gepa-merge.ts.
 *
 * - Frontier ("instance" frontier): for each key (a validation example, a task) the best score seen and the set of
 *   candidates that reach it. A new candidate replaces the set when strictly better, joins it on an exact tie.
 * - Parent ∝ keys won: candidates that are "dominated" are removed first — y is dominated when every key it is best on
 *   also has another remaining candidate; candidates are tried from the lowest aggregate score up, one removal at a time,
 *   restarting after each. Then each remaining candidate's weight is the number of keys whose (reduced) front holds it
 *   (ties count for every tied candidate), and the parent is drawn with probability weight / Σ weights.
 * - Other selectors: `current_best` (first candidate with the highest aggregate), `epsilon_greedy`, `top_k_pareto`.
 * - Minibatch acceptance (default `StrictImprovementAcceptance`): accept when Σ new minibatch scores > Σ parent's on the
 *   same minibatch (`improvement_or_equal`: ≥); an accepted child is then evaluated on the full validation set and
 *   enters the frontier.
 * - Reflection target: round robin over the component names; a child starts at the largest pointer of its parents.
 * - Minibatches (`EpochShuffledBatchSampler`, size 3 by default): ids shuffled once per epoch and padded to a multiple of
 *   the size with the least frequent ids; iteration i takes the i-th slice.
 *
 * Scores are higher-is-better, as in GEPA: negate a minimised metric (sample.ts `oriented`). Deviation: a non-finite
 * score is treated as "not evaluated on that key" (GEPA would let a NaN seed score hold a key forever, since no score
 * compares greater than or equal to NaN). Draws use a seeded `Rand`, so the same seed gives the same parent, but not
 * the same one Python's `random.Random(0)` would give.
 */
import { below, type Rand, sum, weightedIndex } from "./sample.ts";

/** One candidate's scores by key; a key it was not evaluated on is absent. */
export type KeyScores = Readonly<Record<string, number>>;

/** For each key: the best score and the candidates (by index) that reach it. */
export type Front = Map<string, { best: number; members: Set<number> }>;

/** Adds candidate `index` to the frontier (GEPA's `_update_pareto_front_for_val_id`), in place. */
export function updateFront(front: Front, index: number, scores: KeyScores): Front {
  for (const [key, score] of Object.entries(scores)) {
    if (!Number.isFinite(score)) continue;
    const cell = front.get(key);
    if (!cell || score > cell.best) front.set(key, { best: score, members: new Set([index]) });
    else if (score === cell.best) cell.members.add(index);
  }
  return front;
}

/** The frontier of candidates 0..n-1, added in order. */
export function paretoFront(candidates: readonly KeyScores[]): Front {
  const front: Front = new Map();
  candidates.forEach((scores, i) => {
    updateFront(front, i, scores);
  });
  return front;
}

/** GEPA's aggregate score of a candidate: the mean over the keys it was evaluated on (−∞ when none). */
export function aggregate(scores: KeyScores): number {
  const xs = Object.values(scores).filter(Number.isFinite);
  return xs.length ? sum(xs) / xs.length : Number.NEGATIVE_INFINITY;
}

type Fronts = ReadonlyMap<string, ReadonlySet<number>>;

const membersOf = (front: Front | Fronts): Map<string, Set<number>> =>
  new Map([...front].map(([k, v]) => [k, new Set(v instanceof Set ? v : (v as { members: Set<number> }).members)]));

/** y is dominated when every front holding y also holds one of `others` (GEPA's `is_dominated`). */
function isDominated(y: number, others: ReadonlySet<number>, fronts: Fronts): boolean {
  for (const members of fronts.values()) {
    if (!members.has(y)) continue;
    if (![...members].some((p) => others.has(p))) return false;
  }
  return true;
}

/** The fronts with dominated candidates removed (GEPA's `remove_dominated_programs`). */
export function removeDominated(front: Front | Fronts, aggregates: readonly number[]): Map<string, Set<number>> {
  const fronts = membersOf(front);
  const seen: number[] = [];
  for (const members of fronts.values()) for (const p of members) if (!seen.includes(p)) seen.push(p);
  const score = (p: number) => aggregates[p] ?? Number.NEGATIVE_INFINITY;
  const programs = [...seen].sort((a, b) => score(a) - score(b));
  const dominated = new Set<number>();
  let removed = true;
  while (removed) {
    removed = false;
    for (const y of programs) {
      if (dominated.has(y)) continue;
      const others = new Set(programs.filter((p) => p !== y && !dominated.has(p)));
      if (isDominated(y, others, fronts)) {
        dominated.add(y);
        removed = true;
        break;
      }
    }
  }
  return new Map([...fronts].map(([k, members]) => [k, new Set([...members].filter((p) => !dominated.has(p)))]));
}

/** Each non-dominated candidate and the number of keys it is best on, in GEPA's order (first appearance). */
export function paretoParentWeights(front: Front | Fronts, aggregates: readonly number[]): Map<number, number> {
  const weights = new Map<number, number>();
  for (const members of removeDominated(front, aggregates).values())
    for (const p of members) weights.set(p, (weights.get(p) ?? 0) + 1);
  return weights;
}

/** A parent drawn with probability ∝ keys won; undefined when the frontier is empty (no candidate measured). */
export function selectParetoParent(front: Front | Fronts, aggregates: readonly number[], rand: Rand): number | undefined {
  const weights = paretoParentWeights(front, aggregates);
  if (weights.size === 0) return undefined;
  const ids = [...weights.keys()];
  return ids[weightedIndex([...weights.values()], rand)];
}

/** `current_best`: the first candidate with the highest aggregate score. */
export function currentBestParent(aggregates: readonly number[]): number | undefined {
  if (aggregates.length === 0) return undefined;
  let best = 0;
  aggregates.forEach((a, i) => {
    if (a > (aggregates[best] as number)) best = i;
  });
  return best;
}

/** `epsilon_greedy`: with probability ε a uniform candidate, otherwise the current best. */
export function epsilonGreedyParent(aggregates: readonly number[], epsilon: number, rand: Rand): number | undefined {
  if (aggregates.length === 0) return undefined;
  return rand() < epsilon ? below(aggregates.length, rand) : currentBestParent(aggregates);
}

/** `top_k_pareto`: Pareto selection among the k best by aggregate; the best overall when none of them holds a key. */
export function topKParetoParent(front: Front, aggregates: readonly number[], k: number, rand: Rand): number | undefined {
  const top = new Set(
    aggregates
      .map((a, i) => [a, i] as const)
      .sort((x, y) => y[0] - x[0])
      .slice(0, k)
      .map(([, i]) => i),
  );
  const filtered = new Map<string, Set<number>>();
  for (const [key, cell] of front) {
    const kept = new Set([...cell.members].filter((p) => top.has(p)));
    if (kept.size) filtered.set(key, kept);
  }
  return filtered.size ? selectParetoParent(filtered, aggregates, rand) : currentBestParent(aggregates);
}

export type Acceptance = "strict" | "improvement_or_equal";

/** Minibatch acceptance: Σ after > Σ before (strict, GEPA's default) or ≥. */
export function acceptMinibatch(before: readonly number[], after: readonly number[], mode: Acceptance = "strict"): boolean {
  return mode === "strict" ? sum(after) > sum(before) : sum(after) >= sum(before);
}

/** GEPA skips reflecting on a parent whose minibatch scores are all perfect (`skip_perfect_score`, perfect = 1). */
export function allPerfect(scores: readonly (number | null | undefined)[], perfect = 1): boolean {
  return scores.every((s) => s !== null && s !== undefined && s >= perfect);
}

/** Round robin over components: the one to rewrite now and the pointer to store for next time. */
export function roundRobinComponent(pointer: number, components: readonly string[]): { name: string; next: number } {
  if (components.length === 0) throw new RangeError("roundRobinComponent: the candidate has no components");
  const at = ((pointer % components.length) + components.length) % components.length;
  return { name: components[at] as string, next: (at + 1) % components.length };
}

/** A child's starting pointer: the largest of its parents' (0 without parents). */
export function childComponentPointer(parentPointers: readonly number[]): number {
  return parentPointers.length ? Math.max(...parentPointers) : 0;
}

/**
 * One epoch's order: the ids shuffled, then padded to a multiple of `size` by repeating the least frequent id (among
 * equals, the one latest in the shuffled order, which is what `Counter.most_common()[::-1][0]` picks).
 */
export function epochOrder<T>(ids: readonly T[], size: number, rand: Rand): T[] {
  if (ids.length === 0) throw new RangeError("cannot sample a minibatch from an empty set");
  const order = [...ids];
  for (let i = order.length - 1; i > 0; i--) {
    const j = below(i + 1, rand);
    [order[i], order[j]] = [order[j] as T, order[i] as T];
  }
  const counts = new Map<T, number>();
  for (const id of order) counts.set(id, (counts.get(id) ?? 0) + 1);
  const distinct = [...counts.keys()];
  const pad = (size - (order.length % size)) % size;
  for (let n = 0; n < pad; n++) {
    let pick = distinct[0] as T;
    for (const id of distinct) if ((counts.get(id) as number) <= (counts.get(pick) as number)) pick = id;
    order.push(pick);
    counts.set(pick, (counts.get(pick) as number) + 1);
  }
  return order;
}

/** The minibatch of iteration `i` (0-based) and the epoch it belongs to, for orders of one length. */
export function minibatchAt<T>(order: readonly T[], iteration: number, size: number): { epoch: number; ids: T[] } {
  const start = iteration * size;
  const at = start % order.length;
  return { epoch: Math.floor(start / order.length), ids: order.slice(at, at + size) };
}
