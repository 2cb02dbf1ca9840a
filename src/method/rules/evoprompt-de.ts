/**
 * EvoPrompt's differential evolution (Guo et al., arXiv 2309.08532), ported from beeevita/EvoPrompt at commit
 * 94caff336555df99acc5c338c7930c40cc550ad9: evoluter.py (`DEEvoluter.evolute`) and args.py (defaults).
 *
 * For each member p_i of the population, in order: three distinct donors a, b, c are drawn from the other members
 * (`np.random.choice(..., 3, replace=False)`); unless `donor_random` is set (default: not), c is replaced by the best
 * prompt found so far. One LLM call is told to mutate the parts where a and b differ, merge them into c, and cross the
 * result over with p_i. The child replaces p_i only when it scores strictly better (a tie keeps p_i). The best so far is
 * updated as soon as a selected member beats it, so later members of the same generation use the new best; the new
 * population takes effect after the whole generation.
 *
 * Deviations: the running best is a plain maximum (upstream compares against a per-generation best that starts at 0,
 * so it would never update on negative scores); draws use a seeded `Rand`.
 */
import type { Member } from "./evoprompt-ga.ts";
import { type Rand, sampleDistinct } from "./sample.ts";

export interface Donors {
  a: Member;
  b: Member;
  c: Member;
}

/** The donors for member i (needs at least four members). */
export function deDonors(population: readonly Member[], i: number, best: Member, rand: Rand, donorRandom = false): Donors {
  if (population.length < 4) throw new RangeError("EvoPrompt's DE needs at least four members (three donors besides p_i)");
  const others = population.filter((_, k) => k !== i);
  const [a, b, c] = sampleDistinct(others, 3, rand) as [Member, Member, Member];
  return { a, b, c: donorRandom ? c : best };
}

/** The member kept in slot i: the child only when strictly better. */
export function deSelect(old: Member, child: Member): Member {
  return child.score > old.score ? child : old;
}

/** The best so far after a selection. */
export function deBest(best: Member, selected: Member): Member {
  return selected.score > best.score ? selected : best;
}

/** The best member of a population (the first on a tie), the initial `cur_best_prompt`. */
export function bestOf(population: readonly Member[]): Member {
  if (population.length === 0) throw new RangeError("bestOf: empty population");
  return population.reduce((b, m) => (m.score > b.score ? m : b));
}

/**
 * One DE generation, given a `child(p_i, donors)` that writes and scores the child (the LLM call and the evaluation).
 * Returns the next population and the best so far.
 */
export async function deGeneration(
  population: readonly Member[],
  best: Member,
  child: (member: Member, donors: Donors, i: number) => Promise<Member>,
  rand: Rand,
  donorRandom = false,
): Promise<{ population: Member[]; best: Member }> {
  const next: Member[] = [];
  let current = best;
  for (const [i, member] of population.entries()) {
    const donors = deDonors(population, i, current, rand, donorRandom);
    const selected = deSelect(member, await child(member, donors, i));
    current = deBest(current, selected);
    next.push(selected);
  }
  return { population: next, best: current };
}
