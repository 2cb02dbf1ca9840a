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
}

const VALIDITY_KEYS = ["validity", "valid", "is_valid"];

function nonFinite(v: unknown): string | undefined {
  if (v && typeof v === "object" && "__nonfinite__" in (v as Record<string, unknown>))
    return String((v as Record<string, unknown>).__nonfinite__);
  return undefined;
}

/**
 * Turns an evaluator's raw metrics into a verdict. A missing, non-numeric or non-finite metric, a validity flag
 * of 0/false, or a timeout flag makes the evaluation invalid with the reason; nothing else can produce a score.
 */
export function judgeMetrics(
  metrics: Record<string, unknown>,
  metric: string,
): { valid: boolean; score?: number; reason?: string } {
  if (metrics.timeout === true) return { valid: false, reason: "the evaluator reported a timeout" };
  for (const k of VALIDITY_KEYS) {
    if (k in metrics) {
      const v = metrics[k];
      if (v === false || v === 0 || nonFinite(v)) {
        const why =
          typeof metrics.error === "string"
            ? `: ${metrics.error}`
            : typeof metrics.reason === "string"
              ? `: ${metrics.reason}`
              : "";
        return { valid: false, reason: `the evaluator marked the program invalid (${k}=${JSON.stringify(v)})${why}` };
      }
    }
  }
  if (!(metric in metrics)) return { valid: false, reason: `the evaluator's result has no "${metric}"` };
  const raw = metrics[metric];
  const nf = nonFinite(raw);
  if (nf) return { valid: false, reason: `"${metric}" is ${nf}, not a finite number` };
  if (typeof raw !== "number" || Number.isNaN(raw))
    return { valid: false, reason: `"${metric}" is ${JSON.stringify(raw)}, not a number` };
  if (!Number.isFinite(raw)) return { valid: false, reason: `"${metric}" is not finite` };
  return { valid: true, score: raw };
}

export function isBetter(a: number, b: number | undefined, direction: "maximize" | "minimize"): boolean {
  if (b === undefined) return true;
  return direction === "maximize" ? a > b : a < b;
}
