import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reportHtml } from "../../src/compare/html.ts";
import { buildReport } from "../../src/compare/report.ts";
import { reportFolder } from "../../src/compare/report-folder.ts";
import { niceTicks } from "../../src/compare/svg.ts";
import { reportText } from "../../src/compare/text.ts";
import { HoneError } from "../../src/errors.ts";
import { tQuantile } from "../../src/measure/stats.ts";
import { cellRecord, identity } from "./records.ts";

const ESC = "\u001b";

// ln Γ's Lanczos series had one coefficient mistyped (−176.61503916999186 for −176.61502916214059): every t quantile, and
// so every interval of the report, was off from scipy's in the ninth digit (12.7062047091 for 12.7062047362 at df 1).
describe("the t quantile is scipy's to twelve digits", () => {
  it("matches t.ppf(0.975, df)", () => {
    const scipy: [number, number][] = [
      [1, 12.706204736174694],
      [2, 4.302652729749462],
      [3, 3.1824463052837078],
      [5, 2.5705818356363146],
      [10, 2.228138851986274],
      [30, 2.0422724563012378],
      [100, 1.9839715185235518],
    ];
    for (const [df, t] of scipy) expect(tQuantile(df, 0.05) / t).toBeCloseTo(1, 11);
  });
});

// The chart's y ticks were made by adding the step to the first tick until past the top: scores near 1e9 (or 1e16) a
// hair apart give a step below the resolution of the first tick, the sum never moves, and `hone compare --report`
// (and hone view's grid page, which draws the same chart) filled memory until V8 died.
describe("the chart's ticks end for scores a hair apart at any magnitude", () => {
  it("gives a handful of ticks for 1e16 ± 2 and 1e9 ± 1e-7", () => {
    for (const [lo, hi] of [
      [1e16 - 0.12, 1e16 + 2.12],
      [1e9, 1e9 + 1e-7],
      [-1e308, 1e308],
    ] as const) {
      const ticks = niceTicks(lo, hi);
      expect(ticks.length).toBeGreaterThan(0);
      expect(ticks.length).toBeLessThanOrEqual(21);
      for (const t of ticks) expect(Number.isFinite(t)).toBe(true);
    }
    expect(niceTicks(0, 1)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(niceTicks(-0.07, 0.93)).toEqual([0, 0.2, 0.4, 0.6, 0.8]);
  });

  it("writes the page of a grid whose curves sit at 1e9 a hair apart", () => {
    const records = [0, 1].flatMap((seed) => [
      cellRecord({
        method: "random",
        seed,
        final: [1e9],
        curve: [
          [0, 1e9],
          [10, 1e9 + 1e-7 * (seed + 1)],
        ],
      }),
      cellRecord({ method: "greedy", seed, final: [1e9], curve: [[0, 1e9]] }),
    ]);
    const html = reportHtml(buildReport(records), { title: "t" });
    expect(html).toContain('data-testid="chart"');
    expect(html).not.toMatch(/NaN|Infinity/);
  });
});

// Scores are any finite doubles (an evaluator that scores failure as sys.float_info.max): sums, squares and
// differences of scores near ±1.8e308 overflowed, so a cell's interval was [null, null] in --json, the chart's points
// were NaN, and a method far better than the baseline got "no verdict (interval includes 0)".
describe("scores near the largest double keep their statistics", () => {
  const finals = [1.2e308, 1.4e308, 1.6e308];
  const records = finals.flatMap((score, seed) => [
    cellRecord({
      method: "greedy",
      seed,
      final: [score],
      seedHarness: [1.7e308],
      curve: [
        [0, 1.5e308],
        [5, score],
      ],
    }),
    cellRecord({
      method: "random",
      seed,
      final: [-score],
      seedHarness: [1.7e308],
      curve: [
        [0, -1.5e308],
        [5, -score],
      ],
    }),
  ]);

  it("gives the mean and Student t interval scipy gives on the scaled values", () => {
    const r = buildReport(records);
    const greedy = r.cells.find((c) => c.method === "greedy");
    // scipy: t.interval(0.95, 2, mean, sem) of the scores divided by 2**1023, times 2**1023 (the top end is past
    // the largest double: the interval ends there).
    expect((greedy?.mean as number) / 1.4e308).toBeCloseTo(1, 12);
    expect((greedy?.ci95?.[0] as number) / 9.03172457649934e307).toBeCloseTo(1, 11);
    expect(greedy?.ci95?.[1]).toBe(Number.MAX_VALUE);
    expect((greedy?.gain.mean as number) / -2.9999999999999993e307).toBeCloseTo(1, 11);
    expect((greedy?.gain.ci95?.[0] as number) / -7.96827542350066e307).toBeCloseTo(1, 11);
    expect((greedy?.gain.ci95?.[1] as number) / 1.9682754235006614e307).toBeCloseTo(1, 11);
    for (const c of r.cells) for (const p of c.curve) expect(Number.isFinite(p.mean)).toBe(true);
  });

  it("finds the better method better, with finite numbers everywhere", () => {
    for (const interval of ["t", "bootstrap"] as const) {
      const r = buildReport(records, { interval });
      const [c] = r.comparisons;
      expect(c?.verdict).toBe("better");
      expect(c?.mean_difference).toBe(Number.MAX_VALUE);
      expect(JSON.stringify(r)).not.toContain("null,");
      const html = reportHtml(r, { title: "t" });
      expect(html).not.toMatch(/NaN|Infinity/);
    }
  });

  it("changes nothing for ordinary scores", () => {
    const small = [0, 1, 2].flatMap((seed) => [
      cellRecord({ method: "greedy", seed, final: [0.5 + seed * 0.1, 0.3] }),
      cellRecord({ method: "random", seed, final: [0.4, 0.3 - seed * 0.05] }),
    ]);
    const [c] = buildReport(small).comparisons;
    // scipy: t.interval(0.95, 5, mean, sem) of [0.1, 0, 0.2, 0.05, 0.3, 0.1]
    expect(c?.mean_difference).toBeCloseTo(0.125, 12);
    expect(c?.ci95?.[0]).toBeCloseTo(0.01124388738693749, 9);
    expect(c?.ci95?.[1]).toBeCloseTo(0.2387561126130625, 9);
  });
});

// Task names, a partial task's reason and identity values come from cell.json, which anyone with the folder wrote: the
// notes printed them raw, so an ESC sequence in a task name drove the reader's terminal (clear screen, retitle).
describe("the report's notes write control characters out", () => {
  const bad = `t${ESC}[31mred`;
  const records = [0, 1].flatMap((seed) => [
    cellRecord({ method: "random", seed, final: [0.5, null] }),
    cellRecord({
      method: "greedy",
      seed,
      final: [0.7, 0.2],
      identity: identity((id) => {
        id.measurement.executor.model = `m${ESC}]0;owned\u0007`;
      }),
    }),
  ]);
  for (const r of records) {
    for (const side of [r.final, r.seed_harness]) (side.tasks[1] as { task: string }).task = bad;
    (r.final.tasks[0] as { reason?: string }).reason = `fewer repeats${ESC}[2J\rX`;
  }

  it("in the terminal table and in the page", () => {
    const report = buildReport(records);
    const text = reportText(report);
    expect(text).not.toContain(ESC);
    expect(text).not.toContain("\r");
    expect(text).toContain("t\\u001b[31mred");
    expect(text).toContain("fewer repeats\\u001b[2J\\u000dX");
    const html = reportHtml(report, { title: "t" });
    expect(html).not.toContain(ESC);
    expect(html).toContain("t\\u001b[31mred");
  });

  it("in the baseline's name, which an experiment.json with no finished cell gives unchecked", () => {
    const text = reportText(buildReport([], { baseline: `r${ESC}[2J`, pending: ["b+h+random/seed-0"] }));
    expect(text).not.toContain(ESC);
    expect(text).toContain("paired differences against r\\u001b[2J,");
  });
});

describe("a baseline asked for by name is checked before any cell finished", () => {
  it("refuses --baseline naming no method of the planned grid", () => {
    const dir = mkdtempSync(join(tmpdir(), "hone-probe4-"));
    const planned = ["b+h+random/seed-0", "b+h+greedy/seed-0"];
    for (const p of planned) mkdirSync(join(dir, p), { recursive: true });
    writeFileSync(join(dir, "experiment.json"), JSON.stringify({ baseline: "random", planned }));
    expect(() => reportFolder(dir, { baseline: "nosuch" })).toThrow(/no cell of the baseline method "nosuch".*greedy, random/);
    expect(reportFolder(dir).report.pending).toEqual([...planned].sort());
    expect(reportText(reportFolder(dir).report)).toContain("budget (no cell finished yet)");
  });
});

// `--html` naming a folder (or a folder named report.html in the experiment folder) ended in "internal error: EISDIR"
// (exit 1) and left a temporary file beside it.
describe("a folder where the page goes is the user's to mend", () => {
  it("refuses it with a usage error naming it", () => {
    const dir = mkdtempSync(join(tmpdir(), "hone-probe4-"));
    const rec = cellRecord({ method: "random", seed: 0, final: [0.5] });
    mkdirSync(join(dir, "gsm8k-slice+qa+random", "seed-0"), { recursive: true });
    writeFileSync(join(dir, "gsm8k-slice+qa+random", "seed-0", "cell.json"), JSON.stringify(rec));
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return err as HoneError;
      }
      throw new Error("not refused");
    };
    const given = refusal(() => reportFolder(dir, { html: dir }));
    expect(given).toBeInstanceOf(HoneError);
    expect(given.exit).toBe("usage");
    expect(given.message).toBe(`--html ${dir} is a folder: give the page's file name (e.g. ${join(dir, "report.html")})`);
    mkdirSync(join(dir, "report.html"));
    expect(refusal(() => reportFolder(dir)).message).toMatch(/report\.html is a folder, where the report page goes/);
    expect(readdirSync(tmpdir()).filter((f) => f.startsWith(`${dir.split("/").pop()}.`))).toEqual([]);
  });
});
