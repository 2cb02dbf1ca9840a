/**
 * HyperAgents' parent rules (Zhang et al., arXiv 2603.19461), ported from facebookresearch/HyperAgents at commit
 * 59a68f672dfb92c74aeb7e61535d776fb36e172d: utils/gl_utils.py (`select_parent`) and generate_loop.py (`valid_parent`).
 * An extra beside DGM, whose archive it extends.
 *
 * - Candidates: archive nodes that are valid parents and have a score on every domain (the mean over domains); when
 *   none qualifies, the first node with score 0.
 * - `score_child_prop` (the CLI default): p_i ∝ sigmoid(10·(s_i − m)) · exp(−(children_i / 8)³), m = the mean of the
 *   three highest scores (all of them when fewer); `score_prop` drops the children factor; `best` is the first highest;
 *   `latest` the newest candidate; `random` uniform. children_i counts every archive node naming i as parent.
 * - A node is a valid parent when it was evaluated and either every domain scored or a patch exists
 *   (`run_eval and (eval_successful or patch_files is not None)`); a parent whose child generation failed is marked
 *   invalid afterwards. The score does not decide what enters the archive: every node does.
 *
 * Where upstream disagrees with itself: `generate_loop()` defaults to `score_prop`, its CLI to `score_child_prop`; we
 * default to the CLI's. Draws use a seeded `Rand`.
 */
import { below, type Rand, weightedIndex } from "./sample.ts";

export interface HyperNode {
  id: string;
  parent: string | null;
  /** Mean score over the domains, or undefined when a domain has no score. */
  score?: number;
  validParent: boolean;
}

export type HyperSelection = "score_child_prop" | "score_prop" | "best" | "latest" | "random";

/** The candidates and their scores (`select_parent`'s first part). */
export function hyperCandidates(archive: readonly HyperNode[]): { id: string; score: number; children: number }[] {
  const eligible = archive.filter((n) => n.validParent && n.score !== undefined && Number.isFinite(n.score));
  const chosen = eligible.length
    ? eligible.map((n) => ({ id: n.id, score: n.score as number }))
    : archive.slice(0, 1).map((n) => ({ id: n.id, score: 0 }));
  return chosen.map((c) => ({ ...c, children: archive.filter((n) => n.parent === c.id).length }));
}

/** The selection probabilities of the candidates (in archive order). */
export function hyperProbabilities(archive: readonly HyperNode[], method: "score_child_prop" | "score_prop"): number[] {
  const cands = hyperCandidates(archive);
  if (cands.length === 0) return [];
  const top = [...cands.map((c) => c.score)].sort((a, b) => b - a).slice(0, 3);
  const mid = top.reduce((a, b) => a + b, 0) / top.length;
  const w = cands.map((c) => {
    const s = 1 / (1 + Math.exp(-10 * (c.score - mid)));
    return method === "score_prop" ? s : s * Math.exp(-((c.children / 8) ** 3));
  });
  const total = w.reduce((a, b) => a + b, 0);
  return total > 0 ? w.map((x) => x / total) : w.map(() => 1 / w.length);
}

/** One parent, or undefined for an empty archive. */
export function hyperParent(archive: readonly HyperNode[], method: HyperSelection, rand: Rand): string | undefined {
  const cands = hyperCandidates(archive);
  if (cands.length === 0) return undefined;
  if (method === "random") return cands[below(cands.length, rand)]?.id;
  if (method === "latest") return cands.at(-1)?.id;
  if (method === "best") return cands.reduce((b, c) => (c.score > b.score ? c : b)).id;
  return cands[weightedIndex(hyperProbabilities(archive, method), rand)]?.id;
}

/** HyperAgents' validity gate for a new node. */
export const validParent = (n: { evaluated: boolean; allDomainsScored: boolean; patchExists: boolean }): boolean =>
  n.evaluated && (n.allDomainsScored || n.patchExists);
