/**
 * OPRO's decision rules (Yang et al., arXiv 2309.03409), ported from google-deepmind/opro at commit
 * e81b2f573ce4e15755c70c2535279d6fb940b4b7: opro/optimization/opt_utils.py (`gen_ins_and_score_pairs_substr`,
 * `_bucketize_float`, the instruction extraction and filtering in `run_evolution`), opro/evaluation/eval_utils.py
 * (`polish_sentence`), and the defaults of opro/optimization/optimize_instructions.py.
 *
 * - Meta-prompt history: every scored instruction is kept; the meta-prompt shows the past (instruction, score) pairs
 *   sorted ascending by score (stable: equal scores keep their order), cut to the last `max_num_instructions` = 20 (the
 *   best 20), and *then* filtered to score ≥ `old_instruction_score_threshold` (0.3 with GPT scorers, 0 with
 *   text-bison; a threshold of 0 disables the filter), so fewer than 20 may show.
 * - Score shown: with `num_score_buckets` = 100 (the default) round(score·100) as an integer; with no buckets
 *   round(score, 3). Python's round (ties to even). Bucketing requires a score in [0, 1].
 * - Each pair is written "\ntext:\n{instruction}\nscore:\n{score}\n".
 * - Per step `num_generated_instructions_in_each_step` = 8 samples at the optimizer's temperature (constant, or
 *   `linear_increase`: t0 + step/steps·(t1 − t0)); each sample's instruction is the text between <INS> and </INS>
 *   (from the start or to the end when a tag is missing), stripped; then `polish_sentence` (strip, drop "**",
 *   capitalise the first letter); an instruction seen in any earlier step or earlier in this step is dropped; so is one
 *   longer than 500 characters (Python's len: code points), one containing "INS" (the mark of its <INS> tags: a
 *   method with another container passes its own mark), and (GSM8K) one containing a digit (`str.isdigit`: "²" and
 *   "①" are digits too).
 *
 * Deviations: duplicates are recognised by exact text (upstream: the md5 of the ASCII text, which throws on non-ASCII
 * text); the in-step de-duplication keeps first-seen order (upstream `list(set(...))` has none).
 */
import { pyFloatRepr, pyRound } from "./pyfmt.ts";

/**
 * A character Python's `str.isdigit` takes for a digit (Numeric_Type Decimal or Digit: "²" and "①" too), exactly as
 * Python 3.11 (Unicode 14) takes them, generated from `str.isdigit` over every code point: JavaScript's \p{Nd} has
 * no Digit type and follows a newer Unicode, which has digits Python 3.11 does not.
 */
const PY_DIGIT =
  /[\u0030-\u0039\u00B2-\u00B3\u00B9\u0660-\u0669\u06F0-\u06F9\u07C0-\u07C9\u0966-\u096F\u09E6-\u09EF\u0A66-\u0A6F\u0AE6-\u0AEF\u0B66-\u0B6F\u0BE6-\u0BEF\u0C66-\u0C6F\u0CE6-\u0CEF\u0D66-\u0D6F\u0DE6-\u0DEF\u0E50-\u0E59\u0ED0-\u0ED9\u0F20-\u0F29\u1040-\u1049\u1090-\u1099\u1369-\u1371\u17E0-\u17E9\u1810-\u1819\u1946-\u194F\u19D0-\u19DA\u1A80-\u1A89\u1A90-\u1A99\u1B50-\u1B59\u1BB0-\u1BB9\u1C40-\u1C49\u1C50-\u1C59\u2070\u2074-\u2079\u2080-\u2089\u2460-\u2468\u2474-\u247C\u2488-\u2490\u24EA\u24F5-\u24FD\u24FF\u2776-\u277E\u2780-\u2788\u278A-\u2792\uA620-\uA629\uA8D0-\uA8D9\uA900-\uA909\uA9D0-\uA9D9\uA9F0-\uA9F9\uAA50-\uAA59\uABF0-\uABF9\uFF10-\uFF19\u{104A0}-\u{104A9}\u{10A40}-\u{10A43}\u{10D30}-\u{10D39}\u{10E60}-\u{10E68}\u{11052}-\u{1105A}\u{11066}-\u{1106F}\u{110F0}-\u{110F9}\u{11136}-\u{1113F}\u{111D0}-\u{111D9}\u{112F0}-\u{112F9}\u{11450}-\u{11459}\u{114D0}-\u{114D9}\u{11650}-\u{11659}\u{116C0}-\u{116C9}\u{11730}-\u{11739}\u{118E0}-\u{118E9}\u{11950}-\u{11959}\u{11C50}-\u{11C59}\u{11D50}-\u{11D59}\u{11DA0}-\u{11DA9}\u{16A60}-\u{16A69}\u{16AC0}-\u{16AC9}\u{16B50}-\u{16B59}\u{1D7CE}-\u{1D7FF}\u{1E140}-\u{1E149}\u{1E2F0}-\u{1E2F9}\u{1E950}-\u{1E959}\u{1F100}-\u{1F10A}\u{1FBF0}-\u{1FBF9}]/u;

export interface ScoredInstruction {
  text: string;
  /** Higher is better (OPRO's scores are accuracies in [0, 1]). */
  score: number;
  step: number;
}

export interface HistoryOptions {
  /** At most this many pairs shown (the best ones). */
  maxShown?: number;
  /** Only pairs scoring at least this are shown; 0 shows all. */
  threshold?: number;
  /** Scores shown as round(score·buckets); Infinity shows round(score, 3). */
  buckets?: number;
}

export const OPRO_DEFAULTS = { maxShown: 20, threshold: 0.3, buckets: 100, samplesPerStep: 8, maxLength: 500 } as const;

/** Python's round(x·n) for a score in [0, 1] (`_bucketize_float`). */
export function bucketize(score: number, buckets: number): number {
  if (!(score >= 0 && score <= 1)) throw new RangeError(`a bucketed score must be between 0 and 1, got ${score}`);
  return pyRound(score * buckets);
}

/** The score as the meta-prompt prints it. */
export function shownScore(score: number, buckets: number = OPRO_DEFAULTS.buckets): string {
  return buckets === Number.POSITIVE_INFINITY ? pyFloatRepr(pyRound(score, 3)) : String(bucketize(score, buckets));
}

/** The pairs the meta-prompt shows, ascending by score. */
export function metaPromptHistory(history: readonly ScoredInstruction[], o: HistoryOptions = {}): ScoredInstruction[] {
  const maxShown = o.maxShown ?? OPRO_DEFAULTS.maxShown;
  const threshold = o.threshold ?? OPRO_DEFAULTS.threshold;
  const ascending = history
    .map((h, i) => [h, i] as const)
    .sort((a, b) => a[0].score - b[0].score || a[1] - b[1])
    .map(([h]) => h);
  const best = maxShown > 0 ? ascending.slice(-maxShown) : [];
  return best.filter((h) => !threshold || h.score >= threshold);
}

/** The history block of the meta-prompt, exactly as OPRO writes it. */
export function formatHistory(shown: readonly ScoredInstruction[], buckets: number = OPRO_DEFAULTS.buckets): string {
  return shown.map((h) => `\ntext:\n${h.text}\nscore:\n${shownScore(h.score, buckets)}\n`).join("");
}

/** The instruction inside one optimizer sample. */
export function extractInstruction(raw: string, start = "<INS>", end = "</INS>"): string {
  const s = raw.indexOf(start);
  const e = raw.indexOf(end);
  return raw.slice(s === -1 ? 0 : s + start.length, e === -1 ? raw.length : e).trim();
}

/** OPRO's `polish_sentence` (without the optional ending punctuation). */
export function polish(sentence: string): string {
  let s = sentence.trim();
  if (s) {
    s = s.replaceAll("**", "");
    const first = s.codePointAt(0);
    // "**" alone polishes to "" (Python's len("") > 1 is false): there is no first letter to read.
    if (first !== undefined && [...s].length > 1) {
      const letter = String.fromCodePoint(first);
      s = letter.toUpperCase() + s.slice(letter.length);
    }
  }
  return s;
}

export interface NewInstructionOptions {
  maxLength?: number;
  /** GSM8K's rule: an instruction with a digit is skipped. */
  rejectDigits?: boolean;
  /**
   * An instruction holding this is skipped: the mark of the container the meta-prompt asks for, left in by a sample
   * whose extraction failed (upstream: "INS", of its <INS> tags).
   */
  marker?: string;
}

/**
 * The step's instructions to score: polished, unseen (`seen` holds every instruction scored so far and is updated in
 * place, as upstream's md5 set is), and passing the length / "INS" / digit filters.
 */
export function newInstructions(samples: readonly string[], seen: Set<string>, o: NewInstructionOptions = {}): string[] {
  const maxLength = o.maxLength ?? OPRO_DEFAULTS.maxLength;
  const marker = o.marker ?? "INS";
  const fresh: string[] = [];
  for (const text of samples.map((s) => polish(extractInstruction(s)))) {
    if (seen.has(text)) continue;
    seen.add(text);
    fresh.push(text);
  }
  return fresh.filter((t) => [...t].length <= maxLength && !t.includes(marker) && !(o.rejectDigits && PY_DIGIT.test(t)));
}

/** The optimizer's temperature at a step (0-based). */
export function temperatureAt(step: number, steps: number, start: number, end?: number): number {
  return end === undefined ? start : start + (step / steps) * (end - start);
}
