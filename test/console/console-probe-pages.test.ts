import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { haveChromium, launchChromium } from "../helpers/browser.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";
import { writeSyntheticRun } from "../helpers/synthetic-run.ts";

// The console's pages in Debian's chromium, as a user reaches them: by a link, by an address typed or pasted.
const parent = tempDir("hone-console-probe-pages-");
const runDir = join(parent, "cp26");
let browser: Browser;
let page: Page;
let server: Awaited<ReturnType<typeof startConsole>>;
const errors: string[] = [];

beforeAll(async () => {
  if (!haveChromium) return; // each test is skipped with the reason (.ci/run installs chromium)
  await writeSyntheticRun(runDir, { rounds: 2, perRound: 60 }); // 121 candidates: two pages of the round table
  // `hone view runs/cp26`: the folder given is itself a run folder.
  server = await startConsole({ root: runDir, port: 0 });
  browser = await launchChromium();
  page = await browser.newPage();
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("pages reached by link and by address", () => {
  beforeEach((ctx) => requireTool(ctx, "chromium"));
  it("opens the run when the console's folder is itself a run folder", async () => {
    errors.length = 0;
    await page.goto(`${server.url}/`);
    const link = page.getByTestId("run-row").locator("a");
    await link.click();
    await expect.poll(() => page.getByTestId("best-score").count(), { timeout: 10_000 }).toBe(1);
    expect(await page.getByTestId("error-page").count()).toBe(0);
    await page.reload();
    await expect.poll(() => page.getByTestId("best-score").count(), { timeout: 10_000 }).toBe(1);
    expect(errors).toEqual([]);
  });

  it("answers an address with a broken %-escape with the not-found page, not a blank one", async () => {
    for (const path of ["/run/%E0%A4%A", "/run/%", "/run/cp26/candidate/%ZZ"]) {
      errors.length = 0;
      await page.goto(`${server.url}${path}`);
      await expect.poll(() => page.getByTestId("error-page").count(), { timeout: 10_000 }).toBe(1);
      expect(await page.getByTestId("error-page").innerText(), path).toMatch(/Not found[\s\S]*all runs/);
      expect(errors, path).toEqual([]);
    }
  });

  it("keeps the round table's page in the address: back from a candidate returns to it", async () => {
    errors.length = 0;
    await page.goto(`${server.url}/run/cp26`);
    const pager = page.getByTestId("rounds-pager");
    await expect.poll(() => pager.innerText(), { timeout: 10_000 }).toMatch(/page 1 of 2/);
    await page.getByRole("button", { name: "older" }).click();
    await expect.poll(() => pager.innerText()).toMatch(/page 2 of 2/);
    const first = page.getByTestId("candidate-row").locator("a").first();
    await expect.poll(() => first.innerText()).toMatch(/^r01-/);
    const id = await first.innerText();
    await first.click();
    await expect.poll(() => page.locator("main h1").innerText()).toContain(id);
    await page.goBack();
    await expect.poll(() => pager.innerText(), { timeout: 10_000 }).toMatch(/page 2 of 2/);
    expect(await first.innerText()).toBe(id);
    // The same address opened afresh shows the same page.
    await page.goto(page.url());
    await expect.poll(() => pager.innerText(), { timeout: 10_000 }).toMatch(/page 2 of 2/);
    expect(errors).toEqual([]);
  });
});
