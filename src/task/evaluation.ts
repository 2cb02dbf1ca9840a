/** The outcome of one evaluator call on one program, as hone records it. Invalid results never carry a score. */
export interface Evaluation {
  valid: boolean;
  /** The task's metric, present only when valid. */
  score?: number;
  metrics: Record<string, unknown>;
  /** Why the evaluation is invalid. */
  reason?: string;
  artifacts: { stderr?: string; stdout?: string; feedback?: string; [k: string]: unknown };
  seconds: number;
  timedOut?: boolean;
  /** The evaluator itself failed to load (its module raised on import): the program was never run. */
  evaluatorFailed?: boolean;
}

const VALIDITY_KEYS = ["validity", "valid", "is_valid"];

/**
 * What scores an evaluation when the evaluator's result has no value for the task's metric. `none`: nothing (the
 * evaluation is invalid). `mean`: OpenEvolve's rule for a missing combined_score (openevolve/utils/metrics_utils.py,
 * get_fitness_score): the mean of the numeric metrics (booleans and NaN left out) other than the MAP-Elites feature
 * dimensions in `exclude`, or of all numeric metrics when only feature dimensions are numeric.
 */
export interface MetricFallback {
  rule: "none" | "mean";
  exclude: string[];
}

export const NO_FALLBACK: MetricFallback = { rule: "none", exclude: [] };
/** Keys hone itself adds to an evaluator's metrics; they are never part of the program's score. */
const HONE_KEYS = new Set(["cascade_stage"]);

function nonFinite(v: unknown): string | undefined {
  if (v && typeof v === "object" && "__nonfinite__" in (v as Record<string, unknown>))
    return String((v as Record<string, unknown>).__nonfinite__);
  return undefined;
}

/** The numbers OpenEvolve averages: ints and floats, not booleans, not NaN (infinities stay, as there). */
function numericValues(metrics: Record<string, unknown>, skip: (k: string) => boolean): number[] {
  const out: number[] = [];
  for (const [k, v] of Object.entries(metrics)) {
    if (HONE_KEYS.has(k) || skip(k)) continue;
    if (typeof v === "number" && !Number.isNaN(v)) out.push(v);
    else if (nonFinite(v) === "inf") out.push(Number.POSITIVE_INFINITY);
    else if (nonFinite(v) === "-inf") out.push(Number.NEGATIVE_INFINITY);
  }
  return out;
}

/** OpenEvolve's mean of the numeric metrics, or undefined when there is none to average. */
export function meanOfMetrics(metrics: Record<string, unknown>, exclude: string[]): number | undefined {
  const drop = new Set(exclude);
  let values = numericValues(metrics, (k) => drop.has(k));
  if (values.length === 0) values = numericValues(metrics, () => false);
  if (values.length === 0) return undefined;
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** The fallback rule in words, for `hone tasks show`. */
export function describeFallback(metric: string, f: MetricFallback): string {
  if (f.rule === "none") return `the evaluator must return "${metric}"; a result without it is invalid`;
  const excluded = f.exclude.length > 0 ? `, and the feature dimensions ${f.exclude.join(", ")}` : "";
  return `"${metric}" when the evaluator returns it, else (as OpenEvolve does) the mean of its numeric metrics (booleans, NaN${excluded} left out); a result with no number to average is invalid`;
}

function invalidFlag(metrics: Record<string, unknown>): string | undefined {
  for (const k of VALIDITY_KEYS) {
    if (!(k in metrics)) continue;
    const v = metrics[k];
    if (v === false || v === 0 || nonFinite(v)) {
      const why =
        typeof metrics.error === "string"
          ? `: ${metrics.error}`
          : typeof metrics.reason === "string"
            ? `: ${metrics.reason}`
            : "";
      return `the evaluator marked the program invalid (${k}=${JSON.stringify(v)})${why}`;
    }
  }
  return undefined;
}

function scoreOf(raw: unknown, what: string): { valid: boolean; score?: number; reason?: string } {
  const nf = nonFinite(raw);
  if (nf) return { valid: false, reason: `${what} is ${nf}, not a finite number` };
  if (typeof raw !== "number" || Number.isNaN(raw))
    return { valid: false, reason: `${what} is ${JSON.stringify(raw)}, not a number` };
  if (!Number.isFinite(raw)) return { valid: false, reason: `${what} is not finite` };
  return { valid: true, score: raw };
}

/**
 * Turns an evaluator's raw metrics into a verdict. A missing, non-numeric or non-finite metric, a validity flag
 * of 0/false, or a timeout flag makes the evaluation invalid with the reason; nothing else can produce a score.
 * With a `mean` fallback, a result that lacks the metric is scored by OpenEvolve's mean of its numeric metrics.
 */
export function judgeMetrics(
  metrics: Record<string, unknown>,
  metric: string,
  fallback: MetricFallback = NO_FALLBACK,
): { valid: boolean; score?: number; reason?: string } {
  if (metrics.timeout === true) return { valid: false, reason: "the evaluator reported a timeout" };
  const flagged = invalidFlag(metrics);
  if (flagged) return { valid: false, reason: flagged };
  if (metric in metrics) return scoreOf(metrics[metric], `"${metric}"`);
  if (fallback.rule === "none") return { valid: false, reason: `the evaluator's result has no "${metric}"` };
  const mean = meanOfMetrics(metrics, fallback.exclude);
  if (mean === undefined)
    return { valid: false, reason: `the evaluator's result has no "${metric}" and no numeric metric to average` };
  return scoreOf(mean, `the mean of the numeric metrics (no "${metric}")`);
}

export function isBetter(a: number, b: number | undefined, direction: "maximize" | "minimize"): boolean {
  if (b === undefined) return true;
  return direction === "maximize" ? a > b : a < b;
}
