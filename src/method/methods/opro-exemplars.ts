/**
 * OPRO's few-shot exemplars (optimize_instructions.py: `few_shot_qa_pairs`, 3 questions per step,
 * `few_shot_selection_criteria`), read from the archive's per-task scores:
 * - `random` (OPRO's default): that many training tasks drawn at random each step;
 * - `most_wrong` (OPRO's `accumulative_most_frequent`): the tasks some scored version got wrong (score 0, as upstream
 *   counts accuracy == 0), all of them when there are at most that many, else that many drawn from them.
 * Chosen tasks are listed in archive order (upstream sorts the indices). hone never shows a method gold answers, so
 * an exemplar is the task id, how often it was missed, and the evaluator's feedback naming it. A discovery task has
 * one task: its exemplars are lines of the evaluator's feedback on earlier versions, drawn at random.
 */
import type { Archive } from "../method.ts";
import { sampleDistinct } from "../rules/sample.ts";

export type ExemplarSelection = "random" | "most_wrong";

const LINE = 400;

/** Every task measured so far, in the order the archive first met them, with how many scored versions missed it. */
export function taskMisses(archive: Archive): Map<string, { missed: number; scored: number }> {
  const out = new Map<string, { missed: number; scored: number }>();
  for (const c of archive.candidates) {
    if (c.status !== "measured") continue;
    for (const [task, score] of Object.entries(c.measured?.perTask ?? {})) {
      const row = out.get(task) ?? { missed: 0, scored: 0 };
      if (typeof score === "number") {
        row.scored++;
        if (score === 0) row.missed++;
      }
      out.set(task, row);
    }
  }
  return out;
}

/** The tasks shown this step, by the selection rule (in archive order). */
export function chooseTasks(archive: Archive, n: number, how: ExemplarSelection, rand: () => number): string[] {
  const misses = taskMisses(archive);
  const order = [...misses.keys()];
  const pool = how === "random" ? order : order.filter((t) => (misses.get(t)?.missed ?? 0) > 0);
  if (n <= 0 || pool.length === 0) return [];
  const chosen = pool.length <= n ? pool : sampleDistinct(pool, n, rand);
  return order.filter((t) => chosen.includes(t));
}

function feedbackLines(archive: Archive): string[] {
  return [...new Set(archive.candidates.flatMap((c) => c.measured?.feedback ?? []))].map((l) => l.slice(0, LINE));
}

/** The exemplar lines of one step's meta-prompt. */
export function exemplarLines(archive: Archive, n: number, how: ExemplarSelection, rand: () => number): string[] {
  const misses = taskMisses(archive);
  const lines = feedbackLines(archive);
  if (misses.size <= 1) return n > 0 && lines.length > 0 ? sampleDistinct(lines, Math.min(n, lines.length), rand) : [];
  return chooseTasks(archive, n, how, rand).map((task) => {
    const m = misses.get(task) ?? { missed: 0, scored: 0 };
    const about = lines.filter((l) => l.includes(task)).slice(0, 2);
    return [`task ${task}: missed by ${m.missed} of ${m.scored} scored versions`, ...about].join("\n  ");
  });
}
