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

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

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
  view = await startHone(["view", root, "--port", "0", "--json"]);
  url = JSON.parse(view.firstLine).url;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
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
    await expect.poll(() => rows.count()).toBe(2);
    const text = await rows.first().innerText();
    expect(text).toMatch(/cp-a/);
    expect(text).toMatch(/circle-packing/);
    expect(text).toMatch(/optimize · context/);
    expect(text).toMatch(/offline \/ offline/);
    expect(text).toMatch(/finished/);
    expect(text).toMatch(/\d\.\d{5}/);
    expect(await page.getByTestId("sparkline").count()).toBe(2);
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
    await page.getByTestId("diff-against").selectOption("r02-k2");
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
    await shot("compare");
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
