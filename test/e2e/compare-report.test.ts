import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CompareReport } from "../../src/compare/report.ts";
import { launchChromium } from "../helpers/browser.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { missing, requireTool } from "../helpers/requires.ts";

// `hone compare --report` on test/fixtures/compare/grid (written by make-grid.ts): circle packing (one task) and a
// gsm8k slice (four tasks), methods random, greedy, harnessttt (and opro on gsm8k with another budget), seeds 0-2.
// Expected numbers are worked out by hand; t quantiles are scipy's t.ppf(0.975, df) (df 1: 12.7062047, 2: 4.30265273,
// 10: 2.22813885, 11: 2.20098516).
const GRID = join(ROOT, "test", "fixtures", "compare", "grid");
const SHOTS = join(ROOT, "test-output", "screenshots");
const root = tempDir("hone-compare-");
const folder = join(root, "grid");
let json: CompareReport;

const near = (actual: readonly (number | null)[] | null | undefined, expected: readonly number[]) => {
  expect(actual).toHaveLength(expected.length);
  for (const [i, e] of expected.entries()) expect(actual?.[i]).toBeCloseTo(e, 4);
};
const cell = (name: string) => {
  const c = json.cells.find((x) => x.cell === name);
  if (!c) throw new Error(`no cell ${name}`);
  return c;
};

beforeAll(async () => {
  cpSync(GRID, folder, { recursive: true });
  mkdirSync(join(folder, "gsm8k-slice+qa+greedy", "seed-3"), { recursive: true }); // started, not finished
  const r = await hone(["compare", "--report", folder, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  json = JSON.parse(r.stdout);
}, 60_000);

describe("hone compare --report", () => {
  it("prints one object per cell with method, harness, benchmark, seeds, mean, ci95, gain, cost and curve", () => {
    expect(json.cells.map((c) => c.cell)).toEqual([
      "circle-packing+initial+random",
      "circle-packing+initial+greedy",
      "circle-packing+initial+harnessttt",
      "gsm8k-slice+qa+random",
      "gsm8k-slice+qa+greedy",
      "gsm8k-slice+qa+harnessttt",
      "gsm8k-slice+qa+opro",
    ]);
    for (const c of json.cells)
      for (const k of ["method", "harness", "benchmark", "seeds", "mean", "ci95", "gain", "cost", "curve"])
        expect(c).toHaveProperty(k);
    const random = cell("circle-packing+initial+random");
    expect(random).toMatchObject({ method: "random", harness: "initial", benchmark: "circle-packing", seeds: [0, 1, 2] });
    expect(random.cost).toEqual({
      proposer_calls: 0,
      proposer_tokens: 0,
      executor_tokens: 41_000,
      evaluator_calls: 60,
      seconds: 12,
    });
    expect(json.pending).toEqual(["gsm8k-slice+qa+greedy/seed-3"]);
  });

  it("gives each cell's test mean and 95% t interval over seeds, and its gain over the seed harness", () => {
    // random 1.5, 1.6, 1.55: sd 0.05, half-width 4.30265273 · 0.05 / √3 = 0.124207; gains over 0.96: 0.54, 0.64, 0.59.
    const random = cell("circle-packing+initial+random");
    expect(random.mean).toBeCloseTo(1.55, 10);
    near(random.ci95, [1.425793, 1.674207]);
    expect(random.gain.mean).toBeCloseTo(0.59, 10);
    near(random.gain.ci95, [0.465793, 0.714207]);
    // harnessttt 1.4, 1.9, 2.0: mean 1.766667, sd √0.103333 = 0.321455, half-width 4.30265273 · 0.321455 / √3 = 0.798539.
    near(cell("circle-packing+initial+harnessttt").ci95, [0.968128, 2.565205]);
    // gsm8k harnessttt: seed 2 has an invalid task, so 0.75 and 0.5 count: half-width 12.7062047 · 0.125 = 1.588276.
    const ttt = cell("gsm8k-slice+qa+harnessttt");
    expect(ttt.measured_seeds).toEqual([0, 1]);
    expect(ttt.mean).toBeCloseTo(0.625, 10);
    near(ttt.ci95, [-0.963276, 2.213276]);
  });

  it("bands the best so far over seeds on the budget's x-axis", () => {
    // Seeds' steps: (0 .96)(10 1.23)(40 1.5) · (0 .96)(15 1.28)(45 1.6) · (0 .96)(20 1.255)(50 1.55).
    const curve = cell("circle-packing+initial+random").curve;
    expect(curve.map((p) => p.x)).toEqual([0, 10, 15, 20, 40, 45, 50]);
    near(
      curve.map((p) => p.mean),
      [0.96, 1.05, 1.156667, 1.255, 1.345, 1.451667, 1.55],
    );
    expect(curve[curve.length - 1]).toMatchObject({ n: 3, min: 1.5, max: 1.6 });
  });

  it("compares each method with random per task and seed, with a verdict only off zero, and refuses a differing budget", () => {
    const rows = json.comparisons.map((c) => [c.benchmark, c.method, c.status, c.n, c.verdict]);
    expect(rows).toEqual([
      ["circle-packing", "greedy", "compared", 3, "better"],
      ["circle-packing", "harnessttt", "compared", 3, null],
      ["gsm8k-slice", "greedy", "compared", 12, null],
      ["gsm8k-slice", "harnessttt", "compared", 11, "better"],
      ["gsm8k-slice", "opro", "refused", 0, null],
    ]);
    const [cpGreedy, cpTtt, qaGreedy, qaTtt, opro] = json.comparisons;
    near(cpGreedy?.ci95, [0.075793, 0.324207]); // 0.2, 0.15, 0.25: half-width 0.124207
    near(cpTtt?.ci95, [-0.489604, 0.922937]); // −0.1, 0.3, 0.45: mean 0.216667, sd 0.284312, half-width 0.70627
    near(qaGreedy?.ci95, [-0.037357, 0.537357]); // three 1s in 12: sd √(2.25/11), half-width 2.20098516 · 0.130558
    near(qaTtt?.ci95, [0.083551, 1.007358]); // 7 ones, 3 zeros, one −1: mean 6/11, sd √0.472727, half 2.22813885 · 0.207305
    expect(qaTtt?.left_out).toEqual({ seeds_unpaired: [], invalid_pairs: 1 });
    expect(opro?.differences).toEqual(["budget size (budget.size: 60 ≠ 80)"]);
  });

  it("prints an aligned table, the comparisons with their verdicts, and notes naming what was left out or refused", async () => {
    const r = await hone(["compare", "--report", folder]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`wrote ${join(folder, "report.html")}`);
    const lines = r.stdout.split("\n");
    const start = lines.findIndex((l) => l.startsWith("benchmark"));
    const table = lines.slice(start, start + 9);
    expect(new Set(table.map((l) => l.length)).size).toBe(1); // numbers right-aligned to one width, nothing wrapped
    const at = (table[0] as string).indexOf(" test") + 5;
    for (const row of table.slice(2)) expect(row.slice(at - 6, at)).toMatch(/^\d\.\d{4}$/);
    expect(r.stdout).toMatch(/circle-packing\s+initial\s+greedy\s+3\s+0\.2000\s+0\.0758\s+0\.3242\s+better/);
    expect(r.stdout).toMatch(/gsm8k-slice\s+qa\s+opro\s+-\s+-\s+-\s+-\s+refused: identities differ/);
    expect(r.stdout).toContain("gsm8k-slice/qa: opro vs random not compared: budget size (budget.size: 60 ≠ 80)");
    expect(r.stdout).toContain("seed 2 left out of the mean: final choice: 1 of 4 test tasks without a valid result (t4)");
    expect(r.stdout).toContain("the method searched on the test tasks (test-time discovery)");
    expect(r.stdout).toContain("not finished (no cell.json yet): gsm8k-slice+qa+greedy/seed-3");
  });

  it("takes another baseline, the bootstrap interval and another place for the page", async () => {
    const html = join(root, "elsewhere", "greedy.html");
    const args = ["--json", "--baseline", "greedy", "--interval", "bootstrap", "--html", html];
    const r = await hone(["compare", "--report", folder, ...args]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(html, "utf8")).toContain("differences against <b>greedy</b>");
    const rep = JSON.parse(r.stdout) as CompareReport;
    expect(rep).toMatchObject({ baseline: "greedy", interval: "bootstrap" });
    expect(rep.comparisons.map((c) => `${c.benchmark}/${c.method}`)).toEqual([
      "circle-packing/harnessttt",
      "circle-packing/random",
      "gsm8k-slice/harnessttt",
      "gsm8k-slice/opro",
      "gsm8k-slice/random",
    ]);
    // Differences of random − greedy on circle packing: −0.2, −0.15, −0.25; every resampled mean lies in between.
    const random = rep.comparisons[1];
    expect(random?.ci95?.[0]).toBeGreaterThanOrEqual(-0.25 - 1e-12);
    expect(random?.ci95?.[1]).toBeLessThanOrEqual(-0.15 + 1e-12);
    expect(random?.verdict).toBe("worse");
  });

  it("refuses with exit 2 an unknown baseline, a bad interval, a missing folder and a malformed record, naming it", async () => {
    const bad = join(tempDir(), "grid");
    cpSync(GRID, bad, { recursive: true });
    const file = join(bad, "gsm8k-slice+qa+greedy", "seed-1", "cell.json");
    const rec = JSON.parse(readFileSync(file, "utf8"));
    rec.curve.points[1].measured_by = "method";
    writeFileSync(file, JSON.stringify(rec));
    const [baseline, interval, missing, r] = await Promise.all([
      hone(["compare", "--report", folder, "--baseline", "randon"]),
      hone(["compare", "--report", folder, "--interval", "z"]),
      hone(["compare", "--report", join(root, "none")]),
      hone(["compare", "--report", bad]),
    ]);
    expect(baseline.code).toBe(2);
    expect(baseline.stderr).toMatch(/no cell of the baseline method "randon".*greedy, harnessttt, opro, random/);
    expect(interval.code).toBe(2);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/is not a folder/)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} (curve.points.1.measured_by)`);
    expect(existsSync(join(bad, "report.html"))).toBe(false);
  });

  it("validates an experiment file, and refuses what this build cannot run before writing anything (exit 5)", async () => {
    const badFile = join(root, "bad.yaml");
    write(badFile, "name: x\nharnesses: []\n");
    const qaFile = join(root, "qa.yaml");
    write(
      qaFile,
      [
        "name: qa",
        "benchmarks:",
        `  - { benchmark: gsm8k, data_dir: ${join(ROOT, "test", "fixtures", "datasets")}, splits: { train: { limit: 4 }, validation: { limit: 2 }, test: { limit: 2 } } }`,
        `harnesses: [{ name: qa, path: ${join(ROOT, "harnesses", "qa")} }]`,
        "methods: [{ method: random }]",
        "seeds: [0]",
        "budget: { unit: evaluator_calls, size: 5 }",
      ].join("\n"),
    );
    const [r, bad, none, both] = await Promise.all([
      hone(["compare", qaFile, "--out", join(root, "demo")]),
      hone(["compare", badFile]),
      hone(["compare"]),
      hone(["compare", badFile, "--report", folder]),
    ]);
    expect(r.code).toBe(5);
    // The seed harness on 4 train and the choice on 2 validation questions alone take 6 evaluator calls.
    expect(r.stderr).toMatch(
      /qa\.yaml \(budget\.size\): benchmarks\.0 \(gsm8k\): .* take 6 evaluator calls, more than the budget's 5/,
    );
    expect(existsSync(join(root, "demo"))).toBe(false);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toContain(`${badFile} (harnesses)`);
    expect(none.code).toBe(2);
    expect([both.code, both.stderr]).toEqual([2, expect.stringMatching(/not both/)]);
  });
});

describe("report.html in a real browser", () => {
  let browser: Browser;
  beforeAll(async () => {
    if (missing("chromium")) return;
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 60_000);
  beforeEach((ctx) => requireTool(ctx, "chromium"));
  afterAll(async () => {
    await browser?.close();
  });

  it.each([
    ["desktop", 1280, "wide"],
    ["narrow", 390, "narrow"],
  ])("opens from disk with no server and no network, and draws every cell (%s)", async (name, width, variant) => {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => problems.push(m.text()));
    page.on("request", (q) => {
      if (!q.url().startsWith("file:")) problems.push(`request to ${q.url()}`);
    });
    await page.goto(pathToFileURL(join(folder, "report.html")).href);
    expect(await page.getByTestId("group").count()).toBe(2);
    expect(await page.getByTestId("cell-row").count()).toBe(7);
    expect(await page.getByTestId("comparison-row").count()).toBe(5);
    const charts = page.locator(`svg[data-variant="${variant}"]`);
    expect(await charts.count()).toBe(2);
    for (const i of [0, 1]) expect(await charts.nth(i).isVisible()).toBe(true);
    expect(await page.locator(`svg.chart:not([data-variant="${variant}"])`).first().isVisible()).toBe(false);
    // Each method's band is drawn with one point per step of its best so far; opro's (refused) is drawn dashed.
    const first = charts.nth(0).getByTestId("series");
    expect(await first.count()).toBe(3);
    expect(await first.nth(0).getAttribute("data-points")).toBe("7");
    expect(await charts.nth(1).locator(".series.apart").getAttribute("data-method")).toBe("opro");
    expect(await page.getByTestId("comparison-row").filter({ hasText: "better" }).count()).toBe(2);
    expect(await page.getByTestId("notes").innerText()).toContain("budget size (budget.size: 60 ≠ 80)");
    // Wide tables scroll inside their box; the page itself never scrolls sideways.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.screenshot({ path: join(SHOTS, `compare-report-${name}.png`), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });
});
