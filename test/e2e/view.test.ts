import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { haveChromium, launchChromium } from "../helpers/browser.ts";
import { hone, optimizeArgs, startHone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";
import { writeSyntheticRun, writeSyntheticTrajectory } from "../helpers/synthetic-run.ts";

// Real-browser tests of `hone view`: Debian's chromium driven by playwright-core against the console serving runs
// made by the offline model. .ci/run installs chromium; elsewhere the suite is skipped with the reason (a failure on CI).
const SHOTS = join(ROOT, "test-output", "screenshots");
const root = tempDir("hone-view-");
let browser: Browser;
let page: Page;
let view: Awaited<ReturnType<typeof startHone>>;
let url = "";

const runArgs = (out: string, extra: string[] = []) => [
  ...optimizeArgs({ rounds: 2, proposals: 3, maxEvals: 4, seed: 3, out: join(root, out) }),
  ...extra,
];

const DESKTOP = { width: 1440, height: 900 };
const NARROW = { width: 390, height: 844 };

/** Numbers, ids and times in tables that wrap onto a second line (their text's line boxes at more than one top). */
const wrappedCells = () =>
  page.evaluate(() =>
    [...document.querySelectorAll("table.grid td.r, table.grid .mono, table.grid .nowrap")].flatMap((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      return tops.size > 1 ? [el.textContent ?? ""] : [];
    }),
  );

/** Screenshots at desktop and narrow widths, checking at each that no number in a table wraps. */
async function shot(name: string) {
  for (const [label, size] of [
    ["desktop", DESKTOP],
    ["narrow", NARROW],
  ] as const) {
    await page.setViewportSize(size);
    await page.waitForTimeout(50); // a frame for the charts' ResizeObserver
    expect(await wrappedCells(), `${name} at ${label} width`).toEqual([]);
    // Nothing wider than the screen: wide tables scroll inside their own box.
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width, `${name} at ${label} width`).toBeLessThanOrEqual(size.width);
    await page.screenshot({ path: join(SHOTS, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/** The chart legend's text with the cursor away from the chart, then over its middle. */
async function legendAt(testId: string): Promise<{ away: string; over: string; cursor: string | null }> {
  const legend = page.getByTestId(`${testId}-legend`);
  await page.mouse.move(0, 0);
  const away = await legend.innerText();
  const box = await page.locator(`[data-testid=${testId}] .u-over`).boundingBox();
  if (!box) throw new Error("the chart has no plotting area");
  await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2);
  await expect.poll(() => legend.getAttribute("data-cursor")).not.toBe("none");
  return { away, over: await legend.innerText(), cursor: await legend.getAttribute("data-cursor") };
}

function counts(run: string) {
  const db = new Database(join(root, run, "hone.db"), { readonly: true });
  const rounds = (db.prepare("SELECT COUNT(*) AS n FROM rounds WHERE status = 'finished'").get() as { n: number }).n;
  const candidates = (db.prepare("SELECT COUNT(*) AS n FROM candidates WHERE round > 0").get() as { n: number }).n;
  const evals = (db.prepare("SELECT evals_used AS n FROM rollouts WHERE id = 'r01-k0'").get() as { n: number }).n;
  db.close();
  return { rounds, candidates, evals };
}

const canRun = haveChromium;

beforeAll(async () => {
  if (!canRun) return;
  mkdirSync(SHOTS, { recursive: true });
  const [a, b] = await Promise.all([hone(runArgs("cp-a")), hone(runArgs("cp-b", ["--max-evals", "5"]))]);
  expect(a.code, a.stderr).toBe(0);
  expect(b.code, b.stderr).toBe(0);
  // A made-up run whose rollouts are long: 40 edits, with a reasoning model's thinking.
  await writeSyntheticRun(join(root, "synthetic"), { rounds: 2, perRound: 2 });
  writeSyntheticTrajectory(join(root, "synthetic"), "r01-k0", { edits: 40, reasoning: "assistant and model_call" });
  writeSyntheticTrajectory(join(root, "synthetic"), "r01-k1", { edits: 10, reasoning: "model_call" });
  view = await startHone(["view", root, "--port", "0", "--json"]);
  url = JSON.parse(view.firstLine).url;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: DESKTOP });
  page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await view?.stop();
});

describe("hone view in a real browser", () => {
  beforeEach((ctx) => requireTool(ctx, "chromium"));
  it("lists the runs with task, method, models, status, best score and cost", async () => {
    await page.goto(url);
    const rows = page.getByTestId("run-row");
    await expect.poll(() => rows.count()).toBe(3);
    const text = await rows.first().innerText();
    expect(text).toMatch(/cp-a/);
    expect(text).toMatch(/circle-packing/);
    expect(text).toMatch(/optimize · harnessttt · context/);
    expect(text).toMatch(/offline \/ offline/);
    expect(text).toMatch(/finished/);
    expect(text).toMatch(/\d\.\d{5}/);
    expect(await page.getByTestId("sparkline").count()).toBe(3);
    await shot("runs");
  });

  it("draws the run's curve with one point per finished round and per candidate, and its lineage", async () => {
    await page.getByRole("link", { name: "cp-a" }).click();
    const box = page.getByTestId("curve-box");
    await box.waitFor();
    const expected = counts("cp-a");
    expect(Number(await box.getAttribute("data-rounds"))).toBe(expected.rounds);
    const drawn = Number(await box.getAttribute("data-scored")) + Number(await box.getAttribute("data-invalid"));
    expect(drawn).toBe(expected.candidates);
    expect(Number(await page.getByTestId("curve").getAttribute("data-points"))).toBe(expected.rounds + expected.candidates);
    expect(await page.locator("[data-testid=curve] canvas").count()).toBe(1);
    await expect.poll(() => page.getByTestId("lineage-node").count()).toBe(expected.candidates + 1);
    await expect.poll(() => page.getByTestId("candidate-row").count()).toBe(expected.candidates + 1);
    expect(await page.getByTestId("rounds-table").innerText()).toMatch(/reward[\s\S]*advantage/);
    // The legend says what is under the cursor, and the latest values otherwise; never "--".
    const legend = await legendAt("curve");
    expect(legend.away).toMatch(/latest round\s+2[\s\S]*best so far\s+\d\.\d{5}/);
    expect(legend.over).toMatch(/round\s+\d[\s\S]*best so far\s+\d\.\d{5}/);
    expect(`${legend.away}${legend.over}`).not.toMatch(/--/);
    await shot("run");
  });

  it("opens a candidate's files and diffs it against its parent and against another candidate", async () => {
    await page.getByTestId("rounds-table").getByRole("link", { name: "r01-k0" }).click();
    await page.getByTestId("file-list").waitFor();
    expect(await page.getByTestId("file-list").innerText()).toMatch(/agent\.yaml[\s\S]*prompt\.md/);
    const diff = page.getByTestId("diff");
    await diff.waitFor();
    const againstParent = await diff.innerText();
    expect(againstParent).toMatch(/^\+[^+]/m);
    expect(await page.getByTestId("gate").innerText()).toMatch(/verdict/);
    await shot("candidate");
    await page.getByTestId("diff-against").fill("r02-k2");
    await expect.poll(async () => (await diff.innerText()) !== againstParent).toBe(true);
    await page.getByRole("button", { name: "agent.yaml" }).click();
    await expect.poll(() => page.getByTestId("file-content").innerText()).toMatch(/llm_config/);
  });

  it("shows a rollout as a conversation with its evaluations and diffs consecutive programs", async () => {
    await page.getByTestId("candidate-rollouts").getByRole("link", { name: "r01-k0" }).click();
    const conversation = page.getByTestId("conversation");
    await conversation.waitFor();
    await expect.poll(() => page.getByTestId("event-harness").count()).toBe(1);
    expect(await page.getByTestId("event-task").count()).toBe(1);
    expect(await page.getByTestId("event-assistant").count()).toBeGreaterThan(2);
    expect(await page.getByTestId("event-tool").count()).toBeGreaterThan(2);
    expect(await page.getByTestId("event-evaluation").count()).toBe(counts("cp-a").evals);
    expect(await page.getByTestId("event-harness").innerText()).toMatch(/system prompt/);
    await page.getByTestId("program-diff-button").first().click();
    await expect.poll(() => page.getByTestId("program-diff").innerText()).toMatch(/@@/);
    await shot("rollout");
  });

  it("compares two runs on one chart with their receipts, warning that their measurements differ", async () => {
    await page.goto(url);
    await page.getByLabel("pick cp-a").check();
    await page.getByLabel("pick cp-b").check();
    await page.getByTestId("compare-button").click();
    const warning = page.getByTestId("identity-warning");
    await warning.waitFor();
    expect(await warning.innerText()).toMatch(/budget\.maxEvals: 4 ≠ 5/);
    const expected = counts("cp-a").rounds + counts("cp-b").rounds;
    expect(Number(await page.getByTestId("compare-curve").getAttribute("data-points"))).toBe(expected);
    expect(await page.getByTestId("receipts").innerText()).toMatch(/cp-a[\s\S]*cp-b/);
    const legend = await legendAt("compare-curve");
    expect(legend.over).toMatch(/round\s+\d[\s\S]*cp-a\s+\d\.\d{5}[\s\S]*cp-b\s+\d\.\d{5}/);
    expect(`${legend.away}${legend.over}`).not.toMatch(/--/);
    await shot("compare");
  });

  it("folds a 40-edit rollout's edits and reasoning, and unfolds each on demand", async () => {
    await page.goto(`${url}/run/synthetic/rollout/r01-k0`);
    await page.getByTestId("conversation").waitFor();
    const edits = page.getByTestId("event-assistant").filter({ hasText: "edit_program" });
    await expect.poll(() => edits.count()).toBe(40);
    // Reasoning on both the assistant and the model_call event is shown once, folded.
    const reasoning = page.getByTestId("reasoning");
    expect(await reasoning.count()).toBe(40);
    expect(await page.locator("[data-testid=reasoning][open]").count()).toBe(0);
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(height, "the page of 40 edits was 14,890 px with every edit in full").toBeLessThan(7000);
    const edit = edits.first().getByTestId("collapsible");
    expect(await edit.innerText()).not.toMatch(/>>>>>>> REPLACE/);
    await edit.getByRole("button").click();
    expect(await edit.innerText()).toMatch(/=======[\s\S]*>>>>>>> REPLACE/);
    await reasoning.first().locator("summary").click();
    await expect.poll(() => reasoning.first().innerText()).toMatch(/Edit 1: I will move the ring\./);
    await shot("rollout-40-edits");
    await page.goto(`${url}/run/synthetic/rollout/r01-k1`);
    await expect.poll(() => page.getByTestId("event-model-call").count()).toBe(10);
    expect(await page.getByTestId("reasoning").count()).toBe(10);
  });

  it("gives every error page a way back", async () => {
    await page.goto(`${url}/run/nope`);
    const error = page.getByTestId("error-page");
    await error.waitFor();
    expect(await error.innerText()).toMatch(/no run named "nope"/);
    await shot("error-run");
    await error.getByRole("link", { name: "← all runs" }).click();
    await expect.poll(() => page.getByTestId("run-row").count()).toBe(3);
    for (const path of ["/run/cp-a/rollout/nope", "/run/cp-a/candidate/nope", "/run/cp-a/somewhere"]) {
      await page.goto(`${url}${path}`);
      await error.waitFor();
      if (path.endsWith("rollout/nope")) await shot("error-rollout");
      await error.getByRole("link", { name: "← back to run cp-a" }).click();
      await page.getByTestId("curve-box").waitFor();
    }
    await page.goto(`${url}/nowhere`);
    await error.waitFor();
    expect(await error.innerText()).toMatch(/no page at \/nowhere/i);
    expect(await error.getByRole("link").count()).toBe(1);
  });

  it("follows a live run as it gains rounds, without reloading or moving the page", { timeout: 120_000 }, async () => {
    const out = join(root, "live");
    const run = spawn(
      process.execPath,
      [
        join(ROOT, "bin", "hone.js"),
        ...runArgs("live", ["--rounds", "3", "--proposals", "2", "--concurrency", "1"]),
        "--executor-offline-latency-ms",
        "60",
      ],
      { cwd: ROOT, stdio: "ignore" },
    );
    const finished = new Promise<number | null>((resolve) => run.on("close", resolve));
    while (!existsSync(join(out, "hone.db"))) await new Promise((r) => setTimeout(r, 50));
    await page.goto(`${url}/run/live`);
    const box = page.getByTestId("curve-box");
    await box.waitFor();
    await page.evaluate(() => {
      (window as unknown as { stayed: boolean }).stayed = true;
    });
    const height = (await box.boundingBox())?.height;
    const seen = new Set<number>();
    let done = false;
    void finished.then(() => {
      done = true;
    });
    while (!done) {
      seen.add(Number(await box.getAttribute("data-rounds")));
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await finished).toBe(0);
    await expect.poll(async () => Number(await box.getAttribute("data-rounds")), { timeout: 10_000 }).toBe(4);
    seen.add(4);
    expect(seen.size, `rounds seen live: ${[...seen].join(", ")}`).toBeGreaterThanOrEqual(3);
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true);
    expect((await box.boundingBox())?.height).toBe(height);
    await expect.poll(() => page.getByTestId("rounds-done").innerText()).toBe("3 / 3");
    await shot("live-run");
  });
});
