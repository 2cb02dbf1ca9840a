/**
 * ADAS / Meta Agent Search's rules (Hu, Lu, Clune, arXiv 2408.08435), ported from ShengranHu/ADAS at commit
 * 2702bee8fefda42255efc5be9f60e3bd3db96ae4: _mgsm/search.py (`search`: the generation loop) and _mgsm/utils.py
 * (`bootstrap_confidence_interval`); the other domains (_arc, _drop, _gpqa, _mmlu) use the same rules.
 *
 * - Archive: hand-written seed designs, then one entry per generation: {thought, name, code, fitness, generation}, the
 *   proposal's `debug_thought` and `reflection` fields removed. The meta agent reads the whole archive with fitness.
 * - Fitness: 100,000 bootstrap resamples (with replacement, same size) of the per-example scores; their means give the
 *   95% interval (numpy percentiles 2.5 and 97.5, linear interpolation) and the median; shown as
 *   "95% Bootstrap Confidence Interval: (L%, U%), Median: M%" with one decimal.
 * - A generation: propose (the meta agent sees the archive); reflection 1 (shown the previous archive entry from the
 *   second generation on); reflection 2; then evaluate. An evaluation that raises, or whose mean score is below 0.01
 *   ("All 0 accuracy"), sends the error back for a debugged design; at most `debug_max` = 3 evaluations. A failed LLM
 *   call while proposing or reflecting ends the generation without an entry; a failed debug call evaluates the same
 *   design again.
 *
 * Where the code and the paper disagree, and what is followed:
 * - after the last failed evaluation upstream still asks for a debugged design that it never evaluates; we do not ask;
 * - upstream keeps the last successful score list even when a later attempt raised, and archives the newest (possibly
 *   never evaluated) design with it; we archive the design that produced the scores we archive;
 * - a failed proposal does `n -= 1; continue`, meant as a retry, but in a Python `for` loop it has no effect: the
 *   generation is lost. We follow the behaviour (no entry) — a caller may retry.
 * Resamples use a seeded `Rand`, so the numbers agree with numpy's to sampling error (exactly, for small discrete data).
 */
import { pyFixed } from "./pyfmt.ts";
import type { Rand } from "./sample.ts";

export interface Fitness {
  median: number;
  lower: number;
  upper: number;
  /** ADAS's string, as the meta agent reads it. */
  text: string;
}

/** numpy's `percentile(sorted, q)` with linear interpolation (q in [0, 100]). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) throw new RangeError("percentile of no values");
  const pos = (q / 100) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  return a + ((sorted[hi] as number) - a) * (pos - lo);
}

/** ADAS's bootstrap fitness of per-example scores. */
export function bootstrapFitness(
  scores: readonly number[],
  rand: Rand,
  o: { samples?: number; confidence?: number } = {},
): Fitness {
  const n = scores.length;
  if (n === 0) throw new RangeError("bootstrapFitness: no scores to resample");
  const samples = o.samples ?? 100_000;
  const confidence = o.confidence ?? 0.95;
  const means = new Float64Array(samples);
  for (let b = 0; b < samples; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += scores[Math.min(n - 1, Math.floor(rand() * n))] as number;
    means[b] = s / n;
  }
  means.sort();
  const lowerQ = ((1 - confidence) / 2) * 100;
  const lower = percentile(means, lowerQ);
  const upper = percentile(means, 100 - lowerQ);
  const median = percentile(means, 50);
  return { median, lower, upper, text: fitnessText(lower, upper, median) };
}

export const fitnessText = (lower: number, upper: number, median: number): string =>
  `95% Bootstrap Confidence Interval: (${pyFixed(lower * 100, 1)}%, ${pyFixed(upper * 100, 1)}%), Median: ${pyFixed(median * 100, 1)}%`;

export interface Design {
  name: string;
  thought: string;
  code: string;
  [field: string]: unknown;
}

export interface ArchiveEntry extends Design {
  fitness: string;
  generation: number | "initial";
}

/** A design as it enters the archive: its fitness string and generation, without `debug_thought` / `reflection`. */
export function archiveEntry(design: Design, fitness: Fitness, generation: number | "initial"): ArchiveEntry {
  const { debug_thought: _d, reflection: _r, ...rest } = design;
  return { ...rest, fitness: fitness.text, generation };
}

export const ADAS_DEFAULTS = { debugMax: 3, reflections: 2, minMeanScore: 0.01, generations: 30, validSize: 128 } as const;

/** Where a generation is. */
export type AdasState =
  | { at: "propose" }
  | { at: "reflect"; round: 1 | 2; design: Design }
  | { at: "evaluate"; attempt: number; design: Design; last?: { design: Design; scores: number[] } }
  | { at: "debug"; attempt: number; design: Design; error: string; last?: { design: Design; scores: number[] } }
  | { at: "done"; entry?: { design: Design; scores: number[] }; reason: string };

/** What happened at the current state. */
export type AdasEvent =
  | { kind: "reply"; design: Design }
  | { kind: "llm_error"; message: string }
  | { kind: "evaluated"; scores: number[] }
  | { kind: "eval_error"; message: string };

/** What the caller does next: ask the meta agent, evaluate the design, or stop (archiving `entry` if there is one). */
export type AdasAction =
  | { do: "ask"; purpose: "propose" | "reflect1" | "reflect2" | "debug"; error?: string }
  | { do: "evaluate"; design: Design; attempt: number }
  | { do: "stop"; entry?: { design: Design; scores: number[] }; reason: string };

export function adasAction(s: AdasState): AdasAction {
  switch (s.at) {
    case "propose":
      return { do: "ask", purpose: "propose" };
    case "reflect":
      return { do: "ask", purpose: s.round === 1 ? "reflect1" : "reflect2" };
    case "evaluate":
      return { do: "evaluate", design: s.design, attempt: s.attempt };
    case "debug":
      return { do: "ask", purpose: "debug", error: s.error };
    case "done":
      return { do: "stop", ...(s.entry ? { entry: s.entry } : {}), reason: s.reason };
  }
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The next state of a generation (ADAS's control flow as a pure transition). */
export function adasStep(s: AdasState, e: AdasEvent, o: { debugMax?: number; minMeanScore?: number } = {}): AdasState {
  const debugMax = o.debugMax ?? ADAS_DEFAULTS.debugMax;
  const minMean = o.minMeanScore ?? ADAS_DEFAULTS.minMeanScore;
  const fail = (attempt: number, design: Design, error: string, last?: { design: Design; scores: number[] }): AdasState =>
    attempt < debugMax
      ? { at: "debug", attempt, design, error, ...(last ? { last } : {}) }
      : { at: "done", ...(last ? { entry: last } : {}), reason: `no design passed after ${debugMax} evaluations: ${error}` };
  switch (s.at) {
    case "propose":
    case "reflect":
      if (e.kind === "llm_error") return { at: "done", reason: `the meta agent failed: ${e.message}` };
      if (e.kind !== "reply") throw new Error(`adasStep: ${e.kind} while waiting for the meta agent`);
      return s.at === "propose" || s.round === 1
        ? { at: "reflect", round: s.at === "propose" ? 1 : 2, design: e.design }
        : { at: "evaluate", attempt: 1, design: e.design };
    case "evaluate":
      if (e.kind === "evaluated") {
        if (e.scores.length === 0) return { at: "done", reason: "the evaluation returned no scores" };
        if (mean(e.scores) >= minMean) return { at: "done", entry: { design: s.design, scores: e.scores }, reason: "evaluated" };
        return fail(s.attempt, s.design, "All 0 accuracy", { design: s.design, scores: e.scores });
      }
      if (e.kind === "eval_error") return fail(s.attempt, s.design, e.message, s.last);
      throw new Error(`adasStep: ${e.kind} while evaluating`);
    case "debug": {
      const next = { at: "evaluate" as const, attempt: s.attempt + 1, ...(s.last ? { last: s.last } : {}) };
      if (e.kind === "reply") return { ...next, design: e.design };
      if (e.kind === "llm_error") return { ...next, design: s.design };
      throw new Error(`adasStep: ${e.kind} while waiting for a debugged design`);
    }
    case "done":
      return s;
  }
}
