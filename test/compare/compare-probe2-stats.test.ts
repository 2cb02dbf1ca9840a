import { describe, expect, it } from "vitest";
import { differenceInterval, tInterval } from "../../src/compare/intervals.ts";
import { tQuantile } from "../../src/measure/stats.ts";

// The report prints its 95% t intervals to four decimals and says they are Student t 95% intervals. They used a
// three-decimal table, and above df 30 the value at the next tabulated df below (df 39 took df 30's 2.042; every
// df from 120 on took 1.98 where scipy gives 1.968 at 299): a QA grid's paired differences (questions × seeds) were
// wider than stated, off scipy in the third decimal. Expected values are scipy 1.17's, computed outside the code:
//   scipy.stats.t.ppf(0.975, df) and scipy.stats.t.interval(0.95, n - 1, loc=mean, scale=sem).

const close = (actual: readonly number[] | null, expected: readonly number[], digits = 6) => {
  expect(actual).not.toBeNull();
  for (const [i, e] of expected.entries()) expect(actual?.[i]).toBeCloseTo(e, digits);
};

describe("the report's Student t intervals are scipy's", () => {
  it("takes the exact 97.5% quantile at any df", () => {
    const scipy: [number, number][] = [
      [1, 12.7062047362],
      [2, 4.30265272975],
      [9, 2.2621571628],
      [34, 2.03224450932],
      [99, 1.98421695159],
      [299, 1.96792966907],
      [999, 1.96234146113],
    ];
    for (const [df, t] of scipy) expect(tQuantile(df, 0.05)).toBeCloseTo(t, 7);
  });

  it("gives t.interval(0.95, n - 1, mean, sem) for a mean over 3 and over 40 values", () => {
    close(tInterval([1, 2, 3]).ci95, [-0.48413771175033027, 4.48413771175033]);
    const forty = Array.from({ length: 40 }, (_, i) => ((i * 37) % 11) / 10 - 0.4);
    close(tInterval(forty).ci95, [-0.018073814223092247, 0.18807381422309222]);
  });

  it("gives the paired t interval of 300 differences (100 questions × 3 seeds) as scipy does", () => {
    // 160 questions one better, 100 the same, 40 one worse: mean 0.4, sd √((200 − 300 · 0.16) / 299).
    const diffs = [...Array(160).fill(1), ...Array(100).fill(0), ...Array(40).fill(-1)];
    close(differenceInterval(diffs, "t"), [0.3189906503239977, 0.48100934967600234]);
  });
});
