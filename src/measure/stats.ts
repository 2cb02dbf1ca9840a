/** Small statistics for measurement rules: means, sample standard deviations and Student t critical values. */

/** The arithmetic mean; exactly the common value when every value is the same (no rounding from summing). */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const first = xs[0] as number;
  if (xs.every((x) => Object.is(x, first))) return first;
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** The sample standard deviation (n − 1 in the denominator); 0 for fewer than two values. */
export function sampleSd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

// t such that P(T ≤ t) = 0.975 for Student's t with df = 1..30 degrees of freedom (two-sided 95%).
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101,
  2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];
const T975_LARGE: [number, number][] = [
  [120, 1.98],
  [60, 2.0],
  [40, 2.021],
];

/**
 * The two-sided 95% critical value of Student's t. A fractional df (Welch) is rounded down, which can only widen
 * the interval; df above 30 uses the value at the largest tabulated df not above it (1.98 from 120 on, 1.96 only for an
 * infinite df). A report that states a 95% interval takes tQuantile, the exact value.
 */
export function tCritical95(df: number): number {
  if (!Number.isFinite(df)) return 1.96;
  const d = Math.max(1, Math.floor(df + 1e-9));
  if (d <= 30) return T975[d - 1] as number;
  for (const [at, t] of T975_LARGE) if (d >= at) return t;
  return T975[29] as number;
}

/** The regularised incomplete beta function I_x(a, b), by its continued fraction (modified Lentz). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incompleteBeta(1 - x, b, a);
  const lnFront = a * Math.log(x) + b * Math.log(1 - x) - logBeta(a, b) - Math.log(a);
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = 1 / (Math.abs(d) < tiny ? tiny : d);
  let f = d;
  for (let m = 1; m <= 300; m++) {
    for (const num of [
      (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m)),
      -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1)),
    ]) {
      d = 1 + num * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (Math.abs(c) < tiny) c = tiny;
      f *= c * d;
    }
    if (Math.abs(c * d - 1) < 1e-15) break;
  }
  return Math.exp(lnFront) * f;
}

const logBeta = (a: number, b: number) => logGamma(a) + logGamma(b) - logGamma(a + b);

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9: about 15 significant digits). */
function logGamma(x: number): number {
  const g = [
    0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.984369578019572e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const y = x - 1;
  let s = g[0] as number;
  for (let i = 1; i < 9; i++) s += (g[i] as number) / (y + i);
  const t = y + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(s);
}

/** P(T > t) for Student's t with df degrees of freedom, t ≥ 0. */
function tUpperTail(t: number, df: number): number {
  return 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

/**
 * The two-sided critical value of Student's t at level `alpha` (P(|T| > t) = alpha), with df rounded down as in
 * tCritical95. At alpha 0.05 it is tCritical95's table value; other levels (a Bonferroni correction) are computed.
 */
export function tCritical(df: number, alpha: number): number {
  if (alpha === 0.05) return tCritical95(df);
  return tQuantile(Number.isFinite(df) ? Math.max(1, Math.floor(df + 1e-9)) : 1e9, alpha);
}

/**
 * The exact two-sided critical value of Student's t with `df` (≥ 1, any real) degrees of freedom at level `alpha`
 * (scipy's `t.ppf(1 - alpha/2, df)`, to about 10 significant digits): what a report's interval states, where
 * tCritical95's three-decimal table would differ from the stated 95% in the fourth decimal.
 */
export function tQuantile(d: number, alpha: number): number {
  let lo = 0;
  let hi = 1;
  while (tUpperTail(hi, d) > alpha / 2) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (tUpperTail(mid, d) > alpha / 2) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The exact two-sided sign test: of `nonzero` paired differences with no tie, `positive` were above zero. The
 * probability, were each sign a fair coin, of a split at least as uneven: min(1, 2·P(X ≥ max(k, n − k))), X ~ Bin(n, ½),
 * summed in log space so that thousands of pairs do not underflow.
 */
export function signTestP(positive: number, nonzero: number): number {
  if (nonzero <= 0) return 1;
  const k = Math.max(positive, nonzero - positive);
  let logC = 0; // ln C(n, 0)
  const logs: number[] = [];
  for (let i = 0; i <= nonzero; i++) {
    if (i >= k) logs.push(logC - nonzero * Math.LN2);
    logC += Math.log(nonzero - i) - Math.log(i + 1);
  }
  const top = logs[0] as number; // k ≥ n/2: the largest term is the first
  const tail = Math.exp(top) * logs.reduce((a, l) => a + Math.exp(l - top), 0);
  return Math.min(1, 2 * tail);
}
