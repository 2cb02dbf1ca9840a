import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { haveChromium, launchChromium } from "../helpers/browser.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// The runs list a page at a time: a grid of many cells × seeds holds hundreds of run folders, and the list showed the
// first 1,000 and no more (its total said how many there were).
const root = tempDir("hone-console-runs-pager-");
const RUNS = 205; // a page of 200, then 5
let browser: Browser | undefined;
let page: Page;
let server: Awaited<ReturnType<typeof startConsole>>;

beforeAll(async () => {
  if (!haveChromium) return; // the test is skipped with the reason (.ci/run installs chromium)
  const first = join(root, "run-000");
  await writeSyntheticRun(first, { rounds: 1, perRound: 1 });
  for (let i = 1; i < RUNS; i++) {
    const dir = join(root, `run-${String(i).padStart(3, "0")}`);
    mkdirSync(dir);
    copyFileSync(join(first, "hone.db"), join(dir, "hone.db"));
  }
  server = await startConsole({ root, port: 0 });
}, 60_000);

beforeEach(async (ctx) => {
  requireTool(ctx, "chromium");
  if (!browser) {
    browser = await launchChromium();
    page = await browser.newPage();
  }
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the runs list", () => {
  it("shows every run folder a page at a time, the page kept in the address", { timeout: 60_000 }, async () => {
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    const rows = page.getByTestId("run-row");
    const pager = page.getByTestId("runs-pager");
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(200);
    expect(await pager.innerText()).toMatch(/page 1 of 2/);
    await page.getByRole("button", { name: "next" }).click();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(5);
    expect(await rows.first().locator("a").innerText()).toBe("run-200");
    expect(new URL(page.url()).searchParams.get("page")).toBe("2");
    // Back from a run returns to the same page.
    await rows.first().locator("a").click();
    await expect.poll(() => page.getByTestId("best-score").count(), { timeout: 15_000 }).toBe(1);
    await page.goBack();
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(5);
    expect(await pager.innerText()).toMatch(/page 2 of 2/);
    expect(errors).toEqual([]);
  });
});
