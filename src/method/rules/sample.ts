/**
 * Sampling helpers shared by the method rules. Every draw comes from a `Rand` (a generator from src/rng.ts, or any
 * function returning uniform numbers in [0, 1)), never from Math.random, so the same seed gives the same choices.
 */
import type { Direction } from "../reward.ts";

export type Rand = () => number;

/** A uniform integer in [0, n). */
export function below(n: number, rand: Rand): number {
  if (!Number.isInteger(n) || n <= 0) throw new RangeError(`below(n): n must be a positive integer, got ${n}`);
  return Math.min(n - 1, Math.floor(rand() * n));
}

/** One element chosen uniformly. */
export function choice<T>(items: readonly T[], rand: Rand): T {
  if (items.length === 0) throw new RangeError("choice: no items to choose from");
  return items[below(items.length, rand)] as T;
}

/**
 * An index drawn with probability proportional to its (non-negative, finite) weight, as Python's
 * `random.choices(population, weights)` does. All-zero weights are refused: upstream code raises there too.
 */
export function weightedIndex(weights: readonly number[], rand: Rand): number {
  let total = 0;
  for (const w of weights) {
    if (!Number.isFinite(w) || w < 0) throw new RangeError(`weights must be finite and non-negative, got ${w}`);
    total += w;
  }
  if (!(total > 0)) throw new RangeError("weights sum to zero: nothing can be drawn");
  let x = rand() * total;
  for (const [i, w] of weights.entries()) {
    if (x < w) return i;
    x -= w;
  }
  // Rounding can leave x a hair above the last positive weight: return that one.
  for (let i = weights.length - 1; i >= 0; i--) if ((weights[i] as number) > 0) return i;
  return weights.length - 1;
}

/** k distinct positions of `items` (as Python's `random.sample`), in draw order. */
export function sampleDistinct<T>(items: readonly T[], k: number, rand: Rand): T[] {
  if (k > items.length) throw new RangeError(`cannot sample ${k} distinct items from ${items.length}`);
  const pool = [...items];
  const out: T[] = [];
  for (let i = 0; i < k; i++) {
    const j = i + below(pool.length - i, rand);
    [pool[i], pool[j]] = [pool[j] as T, pool[i] as T];
    out.push(pool[i] as T);
  }
  return out;
}

/** A shuffled copy (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], rand: Rand): T[] {
  return sampleDistinct(items, items.length, rand);
}

/** Scores made higher-is-better: the field's rules maximise, so a minimised metric is negated. */
export function oriented(score: number, direction: Direction): number {
  return direction === "maximize" ? score : -score;
}

/** True when `a` is strictly better than `b` in the task's direction. */
export function strictlyBetter(a: number, b: number, direction: Direction): boolean {
  return direction === "maximize" ? a > b : a < b;
}

export const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
export const mean = (xs: readonly number[]): number => (xs.length ? sum(xs) / xs.length : Number.NaN);
