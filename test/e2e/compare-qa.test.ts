import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { CellRecord } from "../../src/compare/cell.ts";
import type { CompareReport } from "../../src/compare/report.ts";
import { launchChromium } from "../helpers/browser.ts";
import { hone, killAfterLine, startHone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { completedJobIds, startQueue } from "../helpers/queue.ts";
import { requireTool } from "../helpers/requires.ts";

// `hone compare` with QA rows: GSM8K's fixture (a train file; measured on its test file) and MATH-500's (test only:
// searched on its search pool, measured on the rest), the qa harness under random and under a method program that
// proposes the oracle harness, two seeds, two repeats on the test split: eight cell × seed runs on the offline model.
const DATA = join(ROOT, "test", "fixtures", "datasets");
const root = tempDir("hone-compare-qa-");
const CELLS = ["gsm8k", "math500"].flatMap((b) =>
  ["random", "oracle"].flatMap((m) => [0, 1].map((s) => `${b}+qa+${m}/seed-${s}`)),
);
const BUDGET = 14;

/** A method program that proposes the oracle harness as a folder (a bring-your-own method that writes folders). */
function oracleMethod(): string {
  const dir = join(root, "oracle-method");
  cpSync(join(ROOT, "harnesses", "oracle"), join(dir, "oracle"), { recursive: true });
  write(join(dir, "method.json"), JSON.stringify({ name: "oracle-proposer", entrypoint: "python3 m.py", timeout: 60 }));
  write(
    join(dir, "m.py"),
    [
      "import json, os, shutil, sys",
      "req = json.load(sys.stdin)",
      "out = os.path.join(req['output_dir'], 'oracle')",
      "shutil.copytree('oracle', out)",
      "json.dump({'parent': 'r00-seed', 'rationale': 'the oracle'}, open(os.path.join(out, 'proposal.json'), 'w'))",
    ].join("\n"),
  );
  return dir;
}

function experiment(file: string, data = DATA, methods = ["random", "oracle"], math500 = true): string {
  const method = oracleMethod();
  const entries = { random: "  - method: random", oracle: `  - { method: ${method}, name: oracle }` };
  write(
    file,
    [
      "name: qa-grid",
      "benchmarks:",
      `  - { benchmark: gsm8k, data_dir: ${data}, splits: { train: { limit: 4 }, validation: { limit: 2 }, test: { limit: 4 } } }`,
      ...(math500
        ? [
            `  - { benchmark: math500, data_dir: ${data}, splits: { train: { limit: 4 }, validation: { limit: 1 }, test: { limit: 4 } } }`,
          ]
        : []),
      `harnesses: [{ name: qa, path: ${join(ROOT, "harnesses", "qa")} }]`,
      "methods:",
      ...methods.map((m) => entries[m as keyof typeof entries]),
      "seeds: [0, 1]",
      `budget: { unit: evaluator_calls, size: ${BUDGET} }`,
      // Four train questions: under the noise rule no gain on them clears the exact sign test (4 of 4 is a coin's 1 in
      // 8), so the search compares train means (optimize-qa.test.ts shows the noise rule promoting on 8 of 8).
      "search: { proposals: 2, concurrency: 2, noise_repeats: 1 }",
      "repeats: 2",
      `baseline: ${methods[0]}`,
    ].join("\n"),
  );
  return file;
}

const EXPERIMENT = experiment(join(root, "qa.yaml"));
const run = (out: string, file = EXPERIMENT, more: string[] = []) =>
  hone(["compare", file, "--out", out, "--json", "--cells", "2", ...more], { timeoutMs: 600_000 });
const cellOf = (out: string, c: string) => JSON.parse(readFileSync(join(out, c, "cell.json"), "utf8")) as CellRecord;
const stable = (report: CompareReport): unknown =>
  JSON.parse(JSON.stringify(report, (k, v) => (k === "seconds" || k === "file" ? undefined : v)));

/** Every question the cell's search measured (train and validation), from its hone.db. */
function searched(dir: string): string[] {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const ids = (db.prepare("SELECT DISTINCT task_id FROM task_results").all() as { task_id: string }[]).map((r) => r.task_id);
  db.close();
  return ids;
}

describe("hone compare with QA rows (offline model)", () => {
  const out = join(root, "grid");
  let report: CompareReport;

  it("searches on train/validation, measures the choice and the seed harness on test with the repeats, per question", {
    timeout: 600_000,
  }, async () => {
    const r = await run(out);
    expect(r.code, r.stderr).toBe(0);
    report = JSON.parse(r.stdout);
    expect(report.cells.map((c) => c.cell)).toEqual([
      "gsm8k+qa+random",
      "gsm8k+qa+oracle",
      "math500+qa+random",
      "math500+qa+oracle",
    ]);
    for (const c of CELLS) {
      const rec = cellOf(out, c);
      const [bench] = c.split("+");
      // The identity names the benchmark, its split, its official scorer, the models, the budget and the repeats.
      expect(rec.identity.split).toBe(bench === "math500" ? "test-heldout" : "test");
      expect(rec.identity.measurement.task).toMatchObject({
        id: `${bench}/${rec.identity.split}[4]`,
        metric: bench === "gsm8k" ? "strict-match" : "exact_match",
      });
      expect(rec.identity.scorer).toMatch(new RegExp(`^${bench} official scorer`));
      expect(rec.identity).toMatchObject({ repeats: 2, budget: { unit: "evaluator_calls", size: BUDGET } });
      expect(rec.identity.measurement.executor.model).toBe("offline");
      // The search is an ordinary optimize --benchmark run, within the budget; its curve on the budget's axis.
      expect(rec.cost.evaluator_calls).toBeLessThanOrEqual(BUDGET);
      expect(rec.curve.points.length).toBeGreaterThan(1);
      for (const p of rec.curve.points) expect(p.x).toBeLessThanOrEqual(rec.cost.evaluator_calls);
      // Per question, measured twice (two `hone eval` runs) for the seed harness and the final choice.
      expect(rec.final.tasks).toHaveLength(4);
      const seedRuns = join(out, ".seed-harness", `${bench}+qa`, `seed-${rec.seed}`);
      for (const k of [0, 1]) expect(existsSync(join(seedRuns, `r${k}`, "summary.json"))).toBe(true);
      // No question a method saw is in the test measurement.
      const seen = new Set(searched(join(out, c)));
      for (const t of rec.final.tasks) expect(seen.has(t.task), t.task).toBe(false);
      // The method's own score of its choice is kept apart, as the method's.
      expect(rec.method_reported.map((m) => m.split)).toEqual(["train", "validation"]);
      expect(rec.method_reported[0]?.candidate).toBe(rec.final.candidate);
    }
    // The oracle method's choice answers every test question; the seed harness (offline model) none.
    const oracle = cellOf(out, "math500+qa+oracle/seed-1");
    expect(oracle.final.candidate).not.toBe("r00-seed");
    expect(oracle.final.tasks.map((t) => t.score)).toEqual([1, 1, 1, 1]);
    expect(oracle.seed_harness.tasks.map((t) => t.score)).toEqual([0, 0, 0, 0]);
    expect(existsSync(join(out, "math500+qa+oracle", "seed-1", "test", "final", "r1", "summary.json"))).toBe(true);
    expect(oracle.method_reported[0]?.score).toBe(1);
    // Paired per question and seed against random: 4 questions × 2 seeds, each a difference of 1.
    for (const b of ["gsm8k", "math500"]) {
      const cmp = report.comparisons.find((x) => x.benchmark === b && x.method === "oracle");
      expect(cmp).toMatchObject({ status: "compared", n: 8, mean_difference: 1, verdict: "better" });
    }
    expect(report.cells.find((c) => c.cell === "gsm8k+qa+oracle")?.gain.mean).toBe(1);
  });

  it("a second invocation does no new work and prints the same report", { timeout: 300_000 }, async () => {
    const before = CELLS.map((c) => statSync(join(out, c, "hone.db")).mtimeMs);
    const r = await run(out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("8 of 8 cell × seed runs already finished");
    expect(CELLS.map((c) => statSync(join(out, c, "hone.db")).mtimeMs)).toEqual(before);
    expect(JSON.parse(r.stdout)).toEqual(report);
  });

  it("killed with SIGKILL mid-way, the same command finishes with the same report", { timeout: 600_000 }, async () => {
    // The GSM8K row alone (four cell × seed runs), one at a time, killed once two have finished.
    const file = experiment(join(root, "killed.yaml"), DATA, ["random", "oracle"], false);
    const again = join(root, "killed");
    const cells = CELLS.filter((c) => c.startsWith("gsm8k"));
    await killAfterLine(["compare", file, "--out", again, "--cells", "1"], /^done /, 2, "stderr");
    const finished = cells.filter((c) => existsSync(join(again, c, "cell.json")));
    expect(finished.length).toBeGreaterThanOrEqual(2);
    expect(finished.length).toBeLessThan(cells.length);
    const records = finished.map((c) => readFileSync(join(again, c, "cell.json"), "utf8"));
    const r = await run(again, file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${finished.length} of 4 cell × seed runs already finished`);
    expect(finished.map((c) => readFileSync(join(again, c, "cell.json"), "utf8"))).toEqual(records);
    const gsm8k = (x: CompareReport) => ({
      ...x,
      cells: x.cells.filter((c) => c.benchmark === "gsm8k"),
      comparisons: x.comparisons.filter((c) => c.benchmark === "gsm8k"),
    });
    expect(stable(JSON.parse(r.stdout))).toEqual(stable(gsm8k(report)));
  });

  it("refuses to compare QA cells whose benchmark data differ, naming the component", { timeout: 300_000 }, async () => {
    // The same grid on a copy of the data whose first GSM8K test question reads differently.
    const data = join(root, "data");
    cpSync(DATA, data, { recursive: true });
    const test = join(data, "gsm8k", "test.jsonl");
    writeFileSync(test, readFileSync(test, "utf8").replace(/"question": "[^"]/, '"question": "Q: '));
    const other = join(root, "other");
    const r = await run(other, experiment(join(root, "other.yaml"), data, ["oracle"], false));
    expect(r.code, r.stderr).toBe(0);
    const mixed = join(root, "mixed");
    cpSync(out, mixed, { recursive: true });
    rmSync(join(mixed, "gsm8k+qa+oracle"), { recursive: true });
    cpSync(join(other, "gsm8k+qa+oracle"), join(mixed, "gsm8k+qa+oracle"), { recursive: true });
    const rep = await hone(["compare", "--report", mixed, "--json"]);
    expect(rep.code, rep.stderr).toBe(0);
    const cmp = (JSON.parse(rep.stdout) as CompareReport).comparisons;
    expect(cmp.find((x) => x.benchmark === "gsm8k")).toMatchObject({ status: "refused" });
    expect(cmp.find((x) => x.benchmark === "gsm8k")?.differences.join("\n")).toMatch(/^task set content hash/);
    expect(cmp.find((x) => x.benchmark === "math500")).toMatchObject({ status: "compared" });
  });

  it("hone view's grid follows the experiment through server-sent events as a cell × seed finishes", {
    timeout: 120_000,
  }, async () => {
    // The finished grid with one record taken away: that search is done, its record not yet written.
    const live = join(root, "live");
    cpSync(out, live, { recursive: true });
    const last = join(live, "math500+qa+oracle", "seed-1", "cell.json");
    const record = readFileSync(last, "utf8");
    rmSync(last);
    const view = await startHone(["view", live, "--port", "0", "--json"]);
    const controller = new AbortController();
    try {
      const base = new URL(JSON.parse(view.firstLine).url).origin;
      const get = async (path: string) => (await fetch(`${base}${path}`)).json();
      const { items } = (await get("/api/experiments")) as { items: { id: string; finished: number; planned: number }[] };
      expect(items).toEqual([expect.objectContaining({ finished: 7, planned: 8 })]);
      const id = encodeURIComponent(items[0]?.id as string);
      const events = await fetch(`${base}/api/experiment/events?id=${id}`, { signal: controller.signal });
      const reader = (events.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      const updates = async (n: number) => {
        while ((text.match(/event: update/g) ?? []).length < n) text += new TextDecoder().decode((await reader.read()).value);
      };
      await updates(1); // the state when the follower connects
      writeFileSync(last, record);
      await updates(2); // the record written: the page is told to reload
      const page = (await get(`/api/experiment?id=${id}`)) as {
        seeds: { state: string }[];
        report: { cells: { cell: string; test_split: string; method_reported: unknown[] }[] };
      };
      expect(page.seeds.filter((x) => x.state === "finished")).toHaveLength(8);
      const cell = page.report.cells.find((c) => c.cell === "math500+qa+oracle");
      expect(cell).toMatchObject({ test_split: "test-heldout" });
      expect(cell?.method_reported).toHaveLength(4);
    } finally {
      controller.abort();
      await view.stop();
    }
  });

  it("with --queue, the search's and the test measurement's questions go to BullMQ workers and give the same records", {
    timeout: 300_000,
  }, async (ctx) => {
    requireTool(ctx, "redis-server");
    const queue = await startQueue(2);
    try {
      const viaQueue = join(root, "queue");
      const file = experiment(join(root, "queue.yaml"), DATA, ["random", "oracle"], false);
      const r = await run(viaQueue, file, ["--queue", queue.url]);
      expect(r.code, r.stderr).toBe(0);
      const without = (c: CellRecord) => ({ ...c, finished: "", cost: { ...c.cost, seconds: 0 } });
      for (const c of CELLS.filter((x) => x.startsWith("gsm8k")))
        expect(without(cellOf(viaQueue, c))).toEqual(without(cellOf(out, c)));
      // Every test-split question was a job on the queue: the seed harness's and the oracle's choices, 2 repeats each.
      const jobs = [...(await completedJobIds(queue.url, "compare-"))].filter((id) => id.includes("--"));
      expect(jobs).toHaveLength(2 * 2 * 4 * 2); // seeds × harnesses measured × questions × repeats
      // The searches' train questions went to the workers too, keyed by each search's run.
      expect((await completedJobIds(queue.url, "optqa-")).size).toBeGreaterThan(0);
    } finally {
      await queue.stop();
    }
  });

  it("report.html and hone view's grid page draw the QA rows, with the split measured (chromium)", {
    timeout: 120_000,
  }, async (ctx) => {
    requireTool(ctx, "chromium");
    const view = await startHone(["view", out, "--port", "0", "--json"]);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(pathToFileURL(join(out, "report.html")).href);
      expect(await page.getByTestId("group").count()).toBe(2);
      expect(await page.getByTestId("measured-on").allInnerTexts()).toEqual([
        expect.stringContaining("on test · strict-match"),
        expect.stringContaining("on test-heldout · exact_match"),
      ]);
      await page.goto(JSON.parse(view.firstLine).url);
      await page.getByTestId("experiments").getByRole("link").click();
      await expect.poll(() => page.getByTestId("grid-progress").innerText()).toMatch(/^8 of 8 cell × seed runs finished/);
      expect(await page.getByTestId("grid-cell").count()).toBe(4);
      expect(await page.getByTestId("grid-measured-on").allInnerTexts()).toEqual([
        expect.stringContaining("test · strict-match"),
        expect.stringContaining("test-heldout · exact_match"),
      ]);
      // The oracle method's own train score of its choice, kept apart from hone's test score.
      expect(await page.getByTestId("grid-method-reported").allInnerTexts()).toEqual(["0.000", "1.000", "0.000", "1.000"]);
      const shots = join(ROOT, "test-output", "screenshots");
      mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: join(shots, "compare-qa-grid-page.png"), fullPage: true });
    } finally {
      await browser.close();
      await view.stop();
    }
  });
});
