/**
 * EvoPrompt's genetic algorithm (Guo et al., arXiv 2309.08532), ported from beeevita/EvoPrompt at commit
 * 94caff336555df99acc5c338c7930c40cc550ad9: evoluter.py (`GAEvoluter.evolute`) and args.py (defaults).
 *
 * - Population of `popsize` = 10 prompts, `budget` = 10 generations; each generation writes `popsize` children, each
 *   from two parents by one LLM call (crossover, then mutation).
 * - Parent selection (`sel_mode`):
 *   `wheel` (default): once per generation, a pool of `popsize` members drawn with replacement with probability
 *   fitness / Σ fitness; each child's two parents are two distinct positions of that pool (`random.sample(pool, 2)`),
 *   so a member drawn twice into the pool can be both parents;
 *   `random`: two distinct members of the population;
 *   `tour`: two groups of two distinct members, the better of each (the first on a tie).
 * - Survival (`ga_mode`): `topk` (default) keeps the best `popsize` of parents ∪ children, one entry per distinct prompt
 *   text (a child equal to a parent carries the child's newer score, since upstream keys scores by text); `std`: child j
 *   replaces member j.
 *
 * Deviations: the wheel needs non-negative fitness (numpy raises otherwise), so scores with a negative value are shifted
 * by their minimum, and all-zero fitness draws uniformly (numpy would fail on 0/0); distinct texts keep first-seen order
 * before the stable sort (upstream sorts `list(set(...))`, whose order is arbitrary). Upstream uses the first metric for
 * selection and the last for survival; hone candidates have one score. Draws use a seeded `Rand`.
 */
import { type Rand, sampleDistinct, weightedIndex } from "./sample.ts";

export interface Member {
  text: string;
  /** Higher is better: negate a minimised metric first (sample.ts `oriented`). */
  score: number;
}

export type GaSelection = "wheel" | "random" | "tour";
export type GaSurvival = "topk" | "std";

export const EVOPROMPT_DEFAULTS = { popsize: 10, budget: 10, selection: "wheel", survival: "topk" } as const;

/** The roulette wheel's weights: the scores, shifted up when one is negative. */
export function wheelWeights(scores: readonly number[]): number[] {
  const min = Math.min(...scores);
  const w = min < 0 ? scores.map((s) => s - min) : [...scores];
  return w.some((x) => x > 0) ? w : w.map(() => 1);
}

/** One generation's wheel pool: `popsize` members drawn with replacement ∝ fitness. */
export function wheelPool(population: readonly Member[], rand: Rand, size = population.length): Member[] {
  const w = wheelWeights(population.map((m) => m.score));
  return Array.from({ length: size }, () => population[weightedIndex(w, rand)] as Member);
}

const better = (a: Member, b: Member) => (b.score > a.score ? b : a);

/** The parent pairs of one generation, one pair per child. */
export function gaParentPairs(
  population: readonly Member[],
  mode: GaSelection,
  rand: Rand,
  children = population.length,
): [Member, Member][] {
  if (population.length < 2) throw new RangeError("EvoPrompt's GA needs at least two members");
  const pool = mode === "wheel" ? wheelPool(population, rand) : population;
  return Array.from({ length: children }, () => {
    if (mode !== "tour") return sampleDistinct(pool, 2, rand) as [Member, Member];
    const [a1, a2] = sampleDistinct(pool, 2, rand) as [Member, Member];
    const [b1, b2] = sampleDistinct(pool, 2, rand) as [Member, Member];
    return [better(a1, a2), better(b1, b2)];
  });
}

/** The next population from the parents and this generation's children (in order). */
export function gaSurvivors(
  parents: readonly Member[],
  children: readonly Member[],
  mode: GaSurvival = "topk",
  popsize = parents.length,
): Member[] {
  if (mode === "std") return parents.map((p, j) => children[j] ?? p);
  const byText = new Map<string, Member>();
  for (const m of [...parents, ...children]) byText.set(m.text, { text: m.text, score: m.score });
  return [...byText.values()].sort((a, b) => b.score - a.score).slice(0, popsize);
}
