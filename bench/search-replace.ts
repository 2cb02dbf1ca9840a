// SEARCH/REPLACE parsing on hostile input: the line parser against the regex it replaced (cubic on this input).

import { applySearchReplace, EditError, MAX_EDIT_WORK, MAX_PROGRAM_CHARS, parseSearchReplace } from "../src/task/evolve-block.ts";
import { ms, report } from "./lib.ts";

const REPS = Number(process.env.BENCH_REPS ?? 5);

// The regex hone used before (kept here only to measure it).
const OLD_BLOCK = /<<<<<<< SEARCH\r?\n([\s\S]*?)\r?\n?=======\r?\n([\s\S]*?)\r?\n?>>>>>>> REPLACE/g;

function time(fn: () => void): number {
  const t = performance.now();
  try {
    fn();
  } catch (err) {
    if (!(err instanceof EditError)) throw err;
  }
  return performance.now() - t;
}

/** One repetition: the rows, and the slowest hostile parse or worst-case apply (the figure with a goal). */
function once(withOldRegex: boolean): { rows: [string, string][]; worst: number } {
  const rows: [string, string][] = [];
  let worst = 0;
  for (const n of [250, 500, 1000]) {
    const text = "<<<<<<< SEARCH\n=======\n".repeat(n);
    const now = time(() => parseSearchReplace(text));
    if (!withOldRegex) continue;
    const old = time(() => [...text.matchAll(OLD_BLOCK)]);
    rows.push([`${n} unclosed blocks (${text.length} chars): old regex / line parser`, `${ms(old)} / ${ms(now)}`]);
  }
  for (const size of [100_000, 500_000]) {
    const text = `<<<<<<< SEARCH\n${"x\n".repeat(size / 2 - 8)}`;
    const now = time(() => parseSearchReplace(text));
    worst = Math.max(worst, now);
    rows.push([`one unclosed block of ${text.length} chars: line parser`, ms(now)]);
  }
  const huge = "<<<<<<< SEARCH\n=======\n".repeat(44_000);
  rows.push([`a ${huge.length}-char edit (over the cap): line parser`, ms(time(() => parseSearchReplace(huge)))]);
  // Applying: a near-limit program whose region is a's, SEARCH texts that match only at its very end and are
  // slow for the engine's indexOf (a…aba…a), as many blocks as the work cap allows.
  const pattern = `${"a".repeat(1250)}b${"a".repeat(1249)}`;
  const program = `# EVOLVE-BLOCK-START\nX = "${"a".repeat(MAX_PROGRAM_CHARS - 2600 - 60)}${pattern}"\n# EVOLVE-BLOCK-END\n`;
  const block = `<<<<<<< SEARCH\n${pattern}\n=======\n${pattern}\n>>>>>>> REPLACE\n`;
  const blocks = Math.floor(MAX_EDIT_WORK / program.length);
  const apply = time(() => applySearchReplace(program, block.repeat(blocks)));
  worst = Math.max(worst, apply);
  rows.push([`${blocks} worst-case blocks over a ${program.length}-char program: apply`, ms(apply)]);
  rows.push([`the engine's indexOf for one such block`, ms(time(() => program.indexOf(pattern)))]);
  return { rows, worst };
}

export async function benchSearchReplace(): Promise<boolean> {
  const runs = Array.from({ length: REPS }, (_, i) => once(i === REPS - 1));
  return report(
    `SEARCH/REPLACE parsing on hostile input (issue 12): ${REPS} repetitions, the rows of the last (the old regex timed there only)`,
    runs[runs.length - 1]?.rows ?? [],
    [
      {
        goal: { figure: "slowest near-limit malformed parse or worst-case apply", op: "<=", value: 250, unit: " ms" },
        samples: runs.map((r) => r.worst),
      },
    ],
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSearchReplace();
