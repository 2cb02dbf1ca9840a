import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { haveChromium, launchChromium } from "../helpers/browser.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";
import { writeSyntheticRun, writeSyntheticTrajectory } from "../helpers/synthetic-run.ts";

// A run folder may be someone else's, and SQLite keeps whatever a column is given: a time that is no time, a blob where
// a status belongs, a config whose fields are objects, JSON that is not JSON. One such run must never leave the list
// of every run blank, and its own pages must draw what they can (or say they cannot), never a blank window.
const root = tempDir("hone-console-probe6-odd-");
const odd = join(root, "odd");
let server: Awaited<ReturnType<typeof startConsole>>;
let browser: Browser | undefined;

beforeAll(async () => {
  await writeSyntheticRun(join(root, "good"), { rounds: 2, perRound: 2 });
  await writeSyntheticRun(odd, { rounds: 2, perRound: 2 });
  const db = new Database(join(odd, "hone.db"));
  db.prepare("UPDATE runs SET created_at = 'yesterday', finished_at = 'later', status = ?, summary = '[1, 2]', config = ?").run(
    Buffer.from("<b>blob</b>"),
    JSON.stringify({ task: { id: "x" }, executor: { model: { name: "m" } }, rounds: "three", method: 5, learning: null }),
  );
  db.prepare("UPDATE rollouts SET identity = '{not json'").run();
  db.prepare("UPDATE rounds SET incumbent_score = 'high' WHERE round = 1").run();
  db.prepare("UPDATE evaluations SET seconds = 'slow', reason = 7").run();
  db.prepare("UPDATE candidates SET gate_error = ? WHERE id = 'r01-k1'").run(Buffer.from("refused"));
  // A blob where a rollout's kind belongs: the candidate page's rollout table expects none.
  db.prepare("UPDATE rollouts SET kind = ? WHERE candidate_id = 'r01-k1'").run(Buffer.from("candidate"));
  db.close();
  // A trajectory whose fields hold other types than hone writes.
  writeSyntheticTrajectory(odd, "r01-k0", { edits: 5 });
  const file = join(odd, "rollouts", "r01-k0", "trajectory.jsonl");
  const events = readFileSync(file, "utf8").trim().split("\n");
  const more = [
    { type: "message", iteration: 0, role: "user", content: { text: "an object" } },
    {
      type: "assistant",
      iteration: 9,
      tool_calls: [{ id: 1 }, { id: 2, function: { name: { x: 1 }, arguments: { edits: "a" } } }],
    },
    { type: "evaluation", index: 2, valid: true, score: "high", seconds: "slow", program_file: "programs/0001.py" },
    { type: { nested: true }, note: "an event whose type is an object" },
    { type: "rollout_end", status: "completed", best_score: "best" },
  ];
  writeFileSync(file, `${[...events, ...more.map((e) => JSON.stringify(e))].join("\n")}\n`);
  server = await startConsole({ root, port: 0 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const get = async (path: string) => {
  const r = await fetch(`${server.url}${path}`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
};

describe("a run whose records hold odd values", () => {
  it("is listed with each field in the shape the pages draw", async () => {
    const { status, body } = await get("/api/runs");
    expect(status).toBe(200);
    const items = body.items as Record<string, unknown>[];
    expect(items.map((i) => i.id)).toEqual(["good", "odd"]);
    const item = items[1] as Record<string, unknown> & { cost: Record<string, unknown> };
    expect(item).toMatchObject({
      status: "unknown",
      task: null,
      executor: null,
      rounds_planned: null,
      method: "optimize · 5",
      direction: "maximize",
      created_at: "yesterday",
    });
    expect(item.cost.seconds).toBeNull();
    expect((item.round_scores as unknown[][])[1]).toEqual([null, expect.any(Number)]);
    const run = await get("/api/runs/odd");
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: "unknown", task: null });
  });

  const watch = async (path: string): Promise<{ page: Page; errors: string[] }> => {
    browser ??= await launchChromium();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    await page.goto(`${server.url}${path}`);
    return { page, errors };
  };

  /** Waits until `page` shows `n` elements of `testId`; else fails with what the page shows instead. */
  const shows = async (w: { page: Page; errors: string[] }, testId: string, n: number) => {
    try {
      await expect.poll(() => w.page.getByTestId(testId).count(), { timeout: 30_000 }).toBe(n);
    } catch {
      const body = await w.page.innerText("body").catch(() => "(no body)");
      throw new Error(`${w.page.url()} shows no ${n} × ${testId}: ${body.slice(0, 500)} ${w.errors.join("; ")}`);
    }
  };

  it("leaves the runs list, the run page and the rollout page drawn in the browser", { timeout: 120_000 }, async (ctx) => {
    requireTool(ctx, "chromium");
    if (!haveChromium) return;
    const list = await watch("/");
    await shows(list, "run-row", 2);
    expect(await list.page.getByTestId("run-row").nth(1).innerText()).toContain("unknown");
    expect(list.errors).toEqual([]);
    await list.page.close(); // its event streams with it

    const run = await watch("/run/odd");
    await shows(run, "curve-box", 1);
    // The round table too: r01-k1's gate refusal is a blob.
    await shows(run, "candidate-row", 5);
    expect(run.errors).toEqual([]);
    await run.page.close(); // its event streams with it

    const rollout = await watch("/run/odd/rollout/r01-k0");
    await shows(rollout, "event-evaluation", 2);
    await shows(rollout, "evaluations", 1);
    expect(await rollout.page.getByTestId("conversation").innerText()).toContain("an object");
    expect(rollout.errors).toEqual([]);
    await rollout.page.close(); // its event streams with it

    // A blob where a rollout's kind belongs, in the candidate page's rollout table.
    const candidate = await watch("/run/odd/candidate/r01-k1");
    await expect.poll(() => candidate.page.locator("h1").innerText(), { timeout: 30_000 }).toContain("r01-k1");
    await expect.poll(() => candidate.page.locator("tbody tr").count(), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await candidate.page.getByTestId("error-page").count()).toBe(0);
    expect(candidate.errors).toEqual([]);
    await candidate.page.close();
  });

  it("says a page it cannot draw could not be drawn, with the way back, never a blank window", {
    timeout: 60_000,
  }, async (ctx) => {
    requireTool(ctx, "chromium");
    if (!haveChromium) return;
    // An answer of the API no page expects (every field the pages draw is guarded, so the API is made to send one).
    browser ??= await launchChromium();
    const page = await browser.newPage();
    await page.route("**/api/runs/odd/candidates/r01-k1*", (route) =>
      route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ rollouts: 5, status: {} }) }),
    );
    await page.goto(`${server.url}/run/odd/candidate/r01-k1`);
    const candidate = { page };
    const error = candidate.page.getByTestId("error-page");
    await expect.poll(() => error.count(), { timeout: 30_000 }).toBe(1);
    expect(await error.innerText()).toContain("could not be drawn");
    expect(await error.getByRole("link", { name: "← back to run odd" }).count()).toBe(1);
  });
});
