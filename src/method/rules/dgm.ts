/**
 * The Darwin Gödel Machine's decision rules (Zhang, Hu, Lu, Lange, Clune, arXiv 2505.22954), ported from jennyzzt/dgm at
 * commit d88fdd65047eaf896bfc31af0b0d3b9cbc421ab9: DGM_outer.py (`choose_selfimproves`, `update_archive`,
 * `get_full_eval_threshold`), self_improve_step.py (`run_harness_swe`: the medium stage), utils/evo_utils.py
 * (`is_compiled_self_improve`).
 *
 * - Parents (`selfimprove_size` = 2 per generation, drawn with replacement):
 *   `score_child_prop` (default): p_i ∝ sigmoid(10·(s_i − 0.5)) · 1/(1 + children_i);
 *   `score_prop`: p_i ∝ sigmoid(10·(s_i − 0.5)); `random`: uniform; `best`: the k highest scores;
 *   baseline `no_darwin`: always the newest archive entry. children_i counts the archive entries whose parent is i.
 * - Target per parent (SWE-bench): "solve_empty_patches" when at least 10% of its results are empty patches and a draw
 *   is below 0.25; else "solve_stochasticity" when a draw is below 0.25; else "solve_contextlength" when a result hit
 *   the context limit and a draw is below 0.25; else a random unresolved instance. Draws happen only when reached.
 * - Archive update: `keep_all` (default) keeps every compiled child; `keep_better` keeps a child with
 *   score ≥ initial score − noise leeway (`eval_noise` = 0.1).
 * - A child "compiles" when it has results, at least one non-empty patch, and at least as many results as the first
 *   stage has tasks.
 * - Staged evaluation: the small subset first; the medium subset when resolved ≥ 0.4 · |small|; the full set when the
 *   score exceeds the threshold = max(0.4, second-highest of [initial score, scores of archive entries evaluated on at
 *   least 90% of the full set]) (the only score when there is one).
 *
 * Where the code disagrees with the paper, and what is followed:
 * - `best` sorts ascending and so takes the k *lowest* scores; we take the k highest, as its name and the paper say.
 *   (It is unreachable from the upstream CLI anyway: `choices=['random', 'score_prop', 'score_child_prop' 'best']`
 *   concatenates the last two strings.)
 * - The full-evaluation threshold is computed and passed to `self_improve`, which never uses it: the public code stops
 *   after the medium stage. We implement the stage the paper describes (`nextStage`).
 * - With no unresolved instance upstream calls `random.choice([])` and crashes (`if unresolved_ids == 0` compares a list
 *   to 0); we return no target, so the caller skips that parent.
 * Draws use a seeded `Rand`, not Python's `random`.
 */
import { below, choice, type Rand, weightedIndex } from "./sample.ts";

export type DgmSelection = "score_child_prop" | "score_prop" | "random" | "best" | "no_darwin";

export interface DgmEntry {
  id: string;
  /** The parent's id; null for the initial agent. */
  parent: string | null;
  /** Accuracy in [0, 1] (higher is better). */
  score: number;
}

export const sigmoidScore = (score: number): number => 1 / (1 + Math.exp(-10 * (score - 0.5)));

/** How many archive entries name each entry as parent. */
export function childrenCounts(archive: readonly DgmEntry[]): Map<string, number> {
  const counts = new Map(archive.map((e) => [e.id, 0]));
  for (const e of archive) if (e.parent !== null && counts.has(e.parent)) counts.set(e.parent, (counts.get(e.parent) ?? 0) + 1);
  return counts;
}

/** The probability of each archive entry being drawn as a parent (in archive order). */
export function parentProbabilities(
  archive: readonly DgmEntry[],
  method: "score_child_prop" | "score_prop" | "random",
): number[] {
  if (archive.length === 0) return [];
  const children = childrenCounts(archive);
  const raw = archive.map((e) => {
    if (method === "random") return 1;
    const s = sigmoidScore(e.score);
    return method === "score_prop" ? s : s / (1 + (children.get(e.id) ?? 0));
  });
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((w) => w / total);
}

/** The parents of one generation (ids, with repetition), or [] for an empty archive. */
export function chooseParents(archive: readonly DgmEntry[], k: number, method: DgmSelection, rand: Rand): string[] {
  if (archive.length === 0 || k <= 0) return [];
  if (method === "no_darwin") return [(archive.at(-1) as DgmEntry).id];
  if (method === "best") {
    const top = [...archive].sort((a, b) => b.score - a.score).slice(0, k);
    const ids = top.map((e) => e.id);
    while (ids.length < k) ids.push(choice(top, rand).id);
    return ids;
  }
  const p = parentProbabilities(archive, method);
  return Array.from({ length: k }, () => (archive[weightedIndex(p, rand)] as DgmEntry).id);
}

export interface DgmResults {
  resolved: readonly string[];
  unresolved: readonly string[];
  emptyPatch: readonly string[];
  /** Whether some unresolved or empty-patch result ran out of context (the same error twice in its log). */
  contextExceeded?: boolean;
}

export type DgmTarget = "solve_empty_patches" | "solve_stochasticity" | "solve_contextlength" | { instance: string };

/** What the parent's self-improvement step works on (DGM's non-polyglot branch). */
export function chooseTarget(r: DgmResults, rand: Rand): DgmTarget | undefined {
  const total = r.resolved.length + r.unresolved.length + r.emptyPatch.length;
  if (r.emptyPatch.length >= 0.1 * total && rand() < 0.25) return "solve_empty_patches";
  if (rand() < 0.25) return "solve_stochasticity";
  if (r.contextExceeded && rand() < 0.25) return "solve_contextlength";
  if (r.unresolved.length === 0) return undefined;
  return { instance: r.unresolved[below(r.unresolved.length, rand)] as string };
}

/** DGM's compile check: results exist, one patch at least is non-empty, and the first stage was fully evaluated. */
export function compiled(
  r: { resolved: number; unresolved: number; submitted: number } | undefined,
  firstStageSize: number,
): boolean {
  if (!r) return false;
  if (r.resolved + r.unresolved === 0) return false;
  return r.submitted >= firstStageSize;
}

export type DgmArchiveRule = "keep_all" | "keep_better";

/** Whether a compiled child enters the archive. */
export function keepChild(score: number, initialScore: number, rule: DgmArchiveRule, noiseLeeway = 0.1): boolean {
  return rule === "keep_all" || score >= initialScore - noiseLeeway;
}

/** The score a child must exceed to be evaluated on the full set. */
export function fullEvalThreshold(
  initialScore: number,
  archive: readonly { score: number; submitted: number }[],
  fullSize: number,
  floor = 0.4,
): number {
  const scores = [initialScore, ...archive.filter((e) => e.submitted >= fullSize * 0.9).map((e) => e.score)];
  const sorted = [...scores].sort((a, b) => b - a);
  return Math.max(sorted.length > 1 ? (sorted[1] as number) : (sorted[0] as number), floor);
}

export type DgmStage = "small" | "medium" | "full";

/**
 * The next evaluation stage after one finished, or "done". After "small": "medium" when resolved ≥ 0.4·|small|. After
 * "medium": "full" when the score (over everything evaluated so far) exceeds the full-evaluation threshold.
 */
export function nextStage(
  finished: DgmStage,
  m: { resolved: number; smallSize: number; score: number; threshold: number },
  mediumFraction = 0.4,
): DgmStage | "done" {
  if (finished === "small") return m.resolved >= m.smallSize * mediumFraction ? "medium" : "done";
  if (finished === "medium") return m.score > m.threshold ? "full" : "done";
  return "done";
}
