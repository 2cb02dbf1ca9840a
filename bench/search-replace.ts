// SEARCH/REPLACE parsing on hostile input: the line parser against the regex it replaced (cubic on this input).

import { EditError, parseSearchReplace } from "../src/task/evolve-block.ts";
import { ms, report } from "./lib.ts";

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

export async function benchSearchReplace(): Promise<void> {
  const rows: [string, string][] = [];
  let worst = 0;
  for (const n of [250, 500, 1000]) {
    const text = "<<<<<<< SEARCH\n=======\n".repeat(n);
    const old = time(() => [...text.matchAll(OLD_BLOCK)]);
    const now = time(() => parseSearchReplace(text));
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
  report("SEARCH/REPLACE parsing on hostile input (issue 12)", rows, {
    ok: worst < 100,
    text: "target: a near-limit malformed edit parsed or refused in under 100 ms",
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await benchSearchReplace();
