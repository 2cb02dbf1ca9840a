/**
 * GSM8K as lm-evaluation-harness scores it (lm_eval/tasks/gsm8k/gsm8k.yaml, version 3.0): two filter pipelines
 * over the response, each a `regex` filter then `take_first`, and the `exact_match` metric against the dataset's
 * whole answer field, with `ignore_case: true`, `ignore_punctuation: false` and
 * `regexes_to_ignore: [",", "\$", "(?s).*#### ", "\.$"]`.
 */

const FALLBACK = "[invalid]";
const STRICT = /#### (-?[0-9.,]+)/;
const FLEXIBLE = /(-?[$0-9.,]{2,})|(-?[0-9]+)/g;

/** strict-match: the first match of `#### (\-?[0-9\.\,]+)`, its group, or "[invalid]". */
export function strictMatchFilter(response: string): string {
  const m = STRICT.exec(response);
  return m ? (m[1] as string) : FALLBACK;
}

/** flexible-extract: the last match of `(-?[$0-9.,]{2,})|(-?[0-9]+)` (group_select -1), its first non-empty group. */
export function flexibleExtractFilter(response: string): string {
  let last: RegExpExecArray | undefined;
  for (const m of response.matchAll(FLEXIBLE)) last = m;
  if (!last) return FALLBACK;
  return (last[1] || last[2] || FALLBACK) as string;
}

/** numpy keeps strings in a `str_` array, which drops trailing NUL characters each time one is built. */
const numpyStr = (s: string) => s.replace(/\0+$/, "");

/**
 * lm-eval's `exact_match` (ported from HF evaluate) for one prediction. Each of `regexes_to_ignore` in order is
 * `re.sub(pattern, "", x)` into a new numpy array: "," and "\$" everywhere; `(?s).*#### ` removes everything up
 * to and including the last "#### " (written with lastIndexOf: the regex is quadratic on text without the
 * marker); `\.$` removes a "." that ends the text or precedes its final "\n" (Python's `$`). Then
 * `ignore_case` (`str.lower`) and numpy's equality.
 */
export function gsm8kExactMatch(prediction: string, reference: string): 0 | 1 {
  const norm = (x: string) => {
    let s = numpyStr(x.replace(/,/g, ""));
    s = numpyStr(s.replace(/\$/g, ""));
    const marker = s.lastIndexOf("#### ");
    if (marker >= 0) s = numpyStr(s.slice(marker + 5));
    s = numpyStr(s.replace(/\.(?=\n?$)/, ""));
    return numpyStr(s.toLowerCase());
  };
  return norm(prediction) === norm(reference) ? 1 : 0;
}

export function scoreGsm8k(response: string, gold: string): { "strict-match": 0 | 1; "flexible-extract": 0 | 1 } {
  return {
    "strict-match": gsm8kExactMatch(strictMatchFilter(response), gold),
    "flexible-extract": gsm8kExactMatch(flexibleExtractFilter(response), gold),
  };
}

/** The gold number as a solver would write it: what follows the last "#### " of the answer field. */
export function gsm8kFinalAnswer(answerField: string): string {
  const i = answerField.lastIndexOf("#### ");
  if (i < 0) throw new Error("a GSM8K answer field ends with a '#### <number>' line");
  return answerField.slice(i + 5).trim();
}
