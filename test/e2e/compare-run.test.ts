import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { CellRecord } from "../../src/compare/cell.ts";
import type { CompareReport } from "../../src/compare/report.ts";
import { launchChromium } from "../helpers/browser.ts";
import { hone, startHone } from "../helpers/cli.ts";
import { GSM8K_FIXTURE, ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { completedJobIds, startQueue } from "../helpers/queue.ts";
import { requireTool } from "../helpers/requires.ts";

// `hone compare <experiment>` on test/fixtures/compare/small.yaml: circle packing, the initial package under random and
// greedy and the example harness program under random, seeds 0 and 1: six cell × seed runs on the offline model.
const EXPERIMENT = join(ROOT, "test", "fixtures", "compare", "small.yaml");
const CELLS = ["packing+initial+random", "packing+initial+greedy", "packing+program+random"].flatMap((c) => [
  `${c}/seed-0`,
  `${c}/seed-1`,
]);
const BUDGET = 15;
const root = tempDir("hone-compare-run-");

const run = (out: string, more: string[] = []) =>
  hone(["compare", EXPERIMENT, "--out", out, "--json", ...more], { timeoutMs: 600_000 });
const cellOf = (out: string, c: string) => JSON.parse(readFileSync(join(out, c, "cell.json"), "utf8")) as CellRecord;

/** The report without what differs between two honest runs: wall-clock seconds and where the files are. */
function stable(report: CompareReport): unknown {
  return JSON.parse(JSON.stringify(report, (k, v) => (k === "seconds" || k === "file" ? undefined : v)));
}

/** Starts the experiment one cell at a time and SIGKILLs it once `cells` cell × seed runs have finished. */
function killAfterCells(out: string, cells: number): Promise<{ killed: boolean }> {
  const child = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), "compare", EXPERIMENT, "--out", out, "--cells", "1"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let killed = false;
  let seen = 0;
  let buffer = "";
  child.stderr.on("data", (d) => {
    buffer += d;
    const lines = buffer.split("\n");
    buffer = lines.pop() ?? "";
    for (const line of lines)
      if (line.startsWith("done ") && ++seen === cells) {
        killed = child.kill("SIGKILL");
      }
  });
  return new Promise((resolve) => child.on("close", () => resolve({ killed })));
}

describe("hone compare <experiment> (offline model)", () => {
  const out = join(root, "small");
  let report: CompareReport;

  it("runs every cell × seed as an ordinary optimize run within the one budget and prints the report", {
    timeout: 600_000,
  }, async () => {
    const r = await run(out);
    expect(r.code, r.stderr).toBe(0);
    report = JSON.parse(r.stdout);
    expect(report.cells.map((c) => c.cell)).toEqual([
      "packing+initial+random",
      "packing+initial+greedy",
      "packing+program+random",
    ]);
    for (const c of CELLS) {
      const rec = cellOf(out, c);
      // An ordinary run directory made by optimize, with the method the cell names.
      const db = new Database(join(out, c, "hone.db"), { readonly: true });
      const row = db.prepare("SELECT kind, config FROM runs").get() as { kind: string; config: string };
      const evals = db
        .prepare("SELECT (SELECT COUNT(*) FROM evaluations) + (SELECT COUNT(*) FROM noise_evaluations) AS n")
        .get() as { n: number };
      db.close();
      expect(row.kind).toBe("optimize");
      expect(JSON.parse(row.config).method).toBe(rec.method);
      // The budget is spent in its unit and never overspent; the curve is on that axis, every point hone's.
      expect(rec.identity.budget).toEqual({ unit: "evaluator_calls", size: BUDGET });
      expect(rec.cost.evaluator_calls).toBeGreaterThan(0);
      expect(rec.cost.evaluator_calls).toBeLessThanOrEqual(BUDGET);
      expect(evals.n).toBe(rec.cost.evaluator_calls);
      expect(rec.curve.points.length).toBeGreaterThan(0);
      for (const p of rec.curve.points) expect(p.x).toBeLessThanOrEqual(rec.cost.evaluator_calls);
      // Measured once on the test split, the seed harness beside it, each task a `hone run` directory of its own.
      expect(rec.final.tasks.map((t) => t.task)).toEqual(["circle-packing"]);
      expect(rec.seed_harness.tasks[0]?.valid).toBe(true);
      expect(
        existsSync(
          join(out, ".seed-harness", `packing+${rec.harness}`, `seed-${rec.seed}`, "circle-packing", "r0", "result.json"),
        ),
      ).toBe(true);
      // The search's own score of its final choice (on the train task) is kept apart, as the method's.
      expect(rec.method_reported).toEqual([
        expect.objectContaining({ split: "train", candidate: rec.final.candidate, x: rec.cost.evaluator_calls }),
      ]);
    }
    // greedy asks the proposer; random does not; the harness program's spec proposals are refused, so it stays.
    expect(cellOf(out, "packing+initial+greedy/seed-0").cost.proposer_calls).toBeGreaterThan(0);
    expect(cellOf(out, "packing+initial+random/seed-0").cost.proposer_calls).toBe(0);
    const program = cellOf(out, "packing+program+random/seed-0");
    expect(program.final.candidate).toBe("r00-seed");
    expect(program.final.tasks[0]?.score).toBe(program.seed_harness.tasks[0]?.score);
    expect(program.identity.measurement.harness).not.toBe(cellOf(out, CELLS[0] as string).identity.measurement.harness);
    expect(existsSync(join(out, "report.html"))).toBe(true);
  });

  it("a second invocation does no new work and prints the same report", { timeout: 300_000 }, async () => {
    const before = CELLS.map((c) => statSync(join(out, c, "hone.db")).mtimeMs);
    const records = CELLS.map((c) => readFileSync(join(out, c, "cell.json"), "utf8"));
    const r = await run(out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("6 of 6 cell × seed runs already finished");
    expect(r.stderr).toContain("0 cell × seed runs made");
    expect(CELLS.map((c) => statSync(join(out, c, "hone.db")).mtimeMs)).toEqual(before);
    expect(CELLS.map((c) => readFileSync(join(out, c, "cell.json"), "utf8"))).toEqual(records);
    expect(JSON.parse(r.stdout)).toEqual(report);
  });

  it("killed with SIGKILL mid-way, the same command finishes with the same report", { timeout: 900_000 }, async () => {
    const again = join(root, "killed");
    const { killed } = await killAfterCells(again, 2);
    expect(killed).toBe(true);
    const finished = CELLS.filter((c) => existsSync(join(again, c, "cell.json")));
    expect(finished.length).toBeGreaterThanOrEqual(2);
    expect(finished.length).toBeLessThan(CELLS.length);
    const records = finished.map((c) => readFileSync(join(again, c, "cell.json"), "utf8"));
    const r = await run(again);
    expect(r.code, r.stderr).toBe(0);
    // The cells finished before the kill were not run again.
    expect(r.stderr).toContain(`${finished.length} of 6 cell × seed runs already finished`);
    expect(finished.map((c) => readFileSync(join(again, c, "cell.json"), "utf8"))).toEqual(records);
    expect(stable(JSON.parse(r.stdout))).toEqual(stable(report));
  });
});

describe("hone compare --queue (cells' rollouts on two BullMQ workers)", () => {
  it("gives the same cell records as the local pool", { timeout: 600_000 }, async (ctx) => {
    requireTool(ctx, "redis-server");
    const local = join(root, "small");
    if (!existsSync(join(local, "packing+initial+greedy", "seed-0", "cell.json"))) ctx.skip("the local run above did not finish");
    const queue = await startQueue(2);
    try {
      const url = queue.url;
      // The same cells as the local run's seed 0 (same names, tasks, harness, budget and search): the same identities.
      const file = join(root, "queue.yaml");
      write(
        file,
        readFileSync(EXPERIMENT, "utf8")
          .replace(/\$schema: .*\n/, "")
          .replaceAll("../../../", `${ROOT}/`)
          .replace(/ {2}- name: program\n.*\n.*\n/, "")
          .replace("seeds: [0, 1]", "seeds: [0]"),
      );
      const out = join(root, "queue");
      const r = await hone(["compare", file, "--out", out, "--queue", url, "--json"], { timeoutMs: 600_000 });
      expect(r.code, r.stderr).toBe(0);
      const without = (c: CellRecord) => ({ ...c, finished: "", cost: { ...c.cost, seconds: 0 } });
      for (const c of ["packing+initial+random/seed-0", "packing+initial+greedy/seed-0"])
        expect(without(cellOf(out, c))).toEqual(without(cellOf(local, c)));
      const db = new Database(join(out, "packing+initial+greedy", "seed-0", "hone.db"), { readonly: true });
      expect(JSON.parse((db.prepare("SELECT config FROM runs").get() as { config: string }).config).queue).toBe(url);
      db.close();
      // Every test-split repeat (the seed harness's and the final choices') was a job on the queue, none ran here.
      const repeats = readdirSync(out, { recursive: true, encoding: "utf8" }).filter((f) => /(^|\/)r\d+\/result\.json$/.test(f));
      expect(repeats.length).toBeGreaterThan(0);
      const jobs = [...(await completedJobIds(url, "run-"))].filter((id) => id.includes("--"));
      expect(jobs).toHaveLength(repeats.length);
    } finally {
      await queue.stop();
    }
  });
});

describe("hone view's grid page", () => {
  it("follows a running experiment until every cell is finished (chromium)", { timeout: 600_000 }, async (ctx) => {
    requireTool(ctx, "chromium");
    const done = join(root, "small");
    if (!existsSync(join(done, "packing+initial+greedy", "seed-1", "cell.json"))) ctx.skip("the local run above did not finish");
    // The finished experiment with two records taken away: their searches are done, their records not yet written.
    const live = join(root, "live");
    cpSync(done, live, { recursive: true });
    for (const c of ["packing+initial+greedy/seed-1", "packing+program+random/seed-1"]) rmSync(join(live, c, "cell.json"));
    const view = await startHone(["view", live, "--port", "0", "--json"]);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(JSON.parse(view.firstLine).url);
      await page.getByTestId("experiments").getByRole("link").click();
      const progress = page.getByTestId("grid-progress");
      await expect.poll(() => progress.innerText(), { timeout: 60_000 }).toMatch(/^4 of 6 cell × seed runs finished/);
      expect(await page.getByTestId("grid-seeds").getByText("started").count()).toBe(2);
      const r = await run(live);
      expect(r.code, r.stderr).toBe(0);
      // The open page reloads by itself as the runs change.
      await expect.poll(() => progress.innerText(), { timeout: 60_000 }).toMatch(/^6 of 6 cell × seed runs finished/);
      expect(await page.getByTestId("grid-cell").count()).toBe(3);
      expect(await page.locator(".grid-chart svg.chart.wide").count()).toBe(2);
      await expect.poll(() => page.getByTestId("grid-comparisons").innerText()).toContain("greedy");
      mkdirSync(join(ROOT, "test-output", "screenshots"), { recursive: true });
      await page.screenshot({ path: join(ROOT, "test-output", "screenshots", "compare-grid-page.png"), fullPage: true });
    } finally {
      await browser.close();
      await view.stop();
    }
  });
});

describe("the example harness program under hone eval", () => {
  it("answers a gsm8k slice on the offline model, scored by the benchmark's rule", { timeout: 300_000 }, async () => {
    const out = join(root, "eval-program");
    const r = await hone(
      [
        "eval",
        "--harness",
        join(ROOT, "harnesses", "examples", "program-harness"),
        "--benchmark",
        "gsm8k",
        "--limit",
        "5",
        "--model",
        "offline",
        "--data-dir",
        join(GSM8K_FIXTURE, ".."),
        "--out",
        out,
        "--json",
      ],
      { timeoutMs: 300_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.harness.name).toBe("program-harness-example");
    expect(summary.completed).toBe(5);
    expect(summary.results).toHaveLength(5);
    for (const t of summary.results) expect(t.modelCalls).toBe(1);
    expect(existsSync(join(out, "hone.db"))).toBe(true);
  });
});
