/**
 * Machine-readable hints the offline model obeys, written anywhere in a prompt, a skill body or a tool result as
 * `hone-hint: key=value` (one per line). This is how a proposer can improve a harness for a model that does not
 * understand language: the hints change how the simulated executor searches.
 */
export interface Hints {
  /** Relative size of a perturbation of a numeric literal (default 0.08). */
  step_scale: number;
  /** How many float literals one edit changes (default 2). */
  literals_per_edit: number;
  /** Smallest absolute step, for literals near zero (default 0.002). */
  min_step: number;
  /** Whether to load listed skills before starting (default true). */
  load_skills: boolean;
  /** Evaluate the starting program first instead of trusting the stated score (default false). */
  evaluate_first: boolean;
  /** A tool taking { block } that edits and evaluates in one call; used instead of edit + evaluate when offered. */
  combined_tool: string;
}

export const defaultHints: Hints = {
  step_scale: 0.08,
  literals_per_edit: 2,
  min_step: 0.002,
  load_skills: true,
  evaluate_first: false,
  combined_tool: "",
};

const HINT_LINE = /hone-hint:\s*([a-z_]+)\s*=\s*([^\s,;]+)/g;

export function parseHints(texts: readonly string[]): Hints {
  const out: Hints = { ...defaultHints };
  for (const text of texts) {
    for (const m of text.matchAll(HINT_LINE)) {
      const key = m[1] as keyof Hints;
      const raw = m[2] ?? "";
      if (!(key in out)) continue;
      if (typeof out[key] === "string") {
        if (/^[a-z][a-z0-9_]{2,31}$/.test(raw)) (out as unknown as Record<string, unknown>)[key] = raw;
      } else if (typeof out[key] === "boolean") {
        (out as unknown as Record<string, unknown>)[key] = raw === "true" || raw === "1" || raw === "yes";
      } else {
        const n = Number(raw);
        if (Number.isFinite(n) && n >= 0) (out as unknown as Record<string, unknown>)[key] = n;
      }
    }
  }
  out.literals_per_edit = Math.max(1, Math.min(8, Math.round(out.literals_per_edit)));
  out.step_scale = Math.min(out.step_scale, 2);
  return out;
}
