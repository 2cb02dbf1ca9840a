import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { haveChromium, launchChromium } from "../helpers/browser.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// `hone eval` and `hone train` record their results per task (task_results) and a train epoch's verdict in
// `decisions`, not in method_state: the run page must show each task's result and each epoch's verdict as recorded.
const root = tempDir("hone-console-probe2-qa-");
const DATA = join(ROOT, "test", "fixtures", "datasets");
let server: Awaited<ReturnType<typeof startConsole>>;
let browser: Browser | undefined;

function query<T>(run: string, sql: string): T[] {
  const db = new Database(join(root, run, "hone.db"), { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  const qa = join(ROOT, "harnesses", "qa");
  const evaluation = hone(
    ["eval", "--harness", qa, "--benchmark", "gsm8k", "--split", "test", "--limit", "5", "--model", "offline"].concat([
      "--data-dir",
      DATA,
      "--out",
      join(root, "eval1"),
    ]),
  );
  writeFileSync(
    join(root, "train.yaml"),
    `harness: ${qa}\npanel: {benchmark: gsm8k, split: validation, limit: 4, data_dir: ${DATA}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\npatch_surface: ["prompt.md"]\n`,
  );
  const train = hone(["train", "--config", join(root, "train.yaml"), "--epochs", "1", "--out", join(root, "train1")]);
  for (const r of await Promise.all([evaluation, train])) expect(r.code, r.stderr).toBe(0);
  server = await startConsole({ root, port: 0 });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const getJson = async <T>(path: string) => (await (await fetch(`${server.url}/api/runs/${path}`)).json()) as T;

describe("QA runs on the run page", () => {
  it("serves each task's result as hone.db holds it", async () => {
    const rows = query<Record<string, unknown>>(
      "eval1",
      "SELECT measurement_id, task_id, status, score, steps, tokens, error, extracted, answer, trajectory FROM task_results ORDER BY idx",
    );
    expect(rows.length).toBe(5);
    const tasks = await getJson<{ total: number; items: unknown[]; measurements: { solved: number }[] }>("eval1/tasks");
    expect(tasks.total).toBe(5);
    expect(tasks.items).toEqual(rows);
    const solved = rows.filter((r) => r.status === "solved").length;
    expect(tasks.measurements.map((m) => m.solved)).toEqual([solved]);
    // A page past the end still names the total (a train run: 4 tasks in each of its 2 measurements).
    expect((await getJson<{ total: number }>("train1/tasks?offset=1000")).total).toBe(8);
  });

  it("shows a train epoch's recorded verdict as the candidate's decision", async () => {
    const [recorded] = query<{ candidate_id: string; decision: string; rule: string; reason: string }>(
      "train1",
      "SELECT candidate_id, decision, rule, reason FROM decisions WHERE round = 1",
    );
    expect(recorded).toBeDefined();
    const page = await getJson<{ items: { id: string; method_decision: unknown }[] }>("train1/candidates");
    const row = page.items.find((c) => c.id === recorded?.candidate_id);
    expect(row?.method_decision).toEqual({
      kept: recorded?.decision === "promote",
      rule: recorded?.rule,
      reason: recorded?.reason,
    });
  });

  it("gives a seed measured on the panel the score hone.db records for it", async () => {
    const [seed] = query<{ id: string; score: number }>("train1", "SELECT id, score FROM candidates WHERE status = 'seed'");
    expect(typeof seed?.score).toBe("number");
    const page = await getJson<{ items: { id: string; score: number | null }[] }>("train1/candidates");
    expect(page.items.find((c) => c.id === seed?.id)?.score).toBe(seed?.score);
    expect((await getJson<{ score: number | null }>(`train1/candidates/${seed?.id}`)).score).toBe(seed?.score);
  });

  it("names a train run's best as HEAD's measured score when no epoch promoted", async () => {
    const rounds = query<{ round: number; incumbent_score: number; best_score: number | null }>(
      "train1",
      "SELECT round, incumbent_score, best_score FROM rounds ORDER BY round",
    );
    const promoted = rounds.filter((r) => r.best_score !== null).map((r) => r.best_score as number);
    const head = promoted.length > 0 ? Math.max(...promoted) : rounds[0]?.incumbent_score;
    expect(typeof head).toBe("number");
    const list = (await (await fetch(`${server.url}/api/runs`)).json()) as { items: { id: string; best_score: number | null }[] };
    expect(list.items.find((r) => r.id === "train1")?.best_score).toBe(head);
    expect((await getJson<{ best_score: number | null }>("train1")).best_score).toBe(head);
  });

  it("names each compared run that recorded no measurement identity, the first one too", async () => {
    const r = await fetch(`${server.url}/api/compare?run=eval1&run=train1`);
    const { warnings } = (await r.json()) as { warnings: string[] };
    expect(warnings.filter((w) => w.includes("no measurement identity")).map((w) => w.split(":")[0])).toEqual([
      "eval1",
      "train1",
    ]);
  });

  it("draws the task table and the verdicts in the browser with no error", async (ctx) => {
    requireTool(ctx, "chromium");
    if (!haveChromium) return;
    browser = await launchChromium();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && errors.push(`console: ${m.text()}`));
    await page.goto(`${server.url}/run/eval1`);
    await expect.poll(() => page.getByTestId("task-row").count(), { timeout: 10_000 }).toBe(5);
    const solved = query<{ n: number }>("eval1", "SELECT COUNT(*) AS n FROM task_results WHERE status = 'solved'")[0]?.n;
    expect(await page.getByTestId("measurements").innerText()).toContain(`${solved} of 5 solved`);
    await page.goto(`${server.url}/run/train1`);
    await expect.poll(() => page.getByTestId("task-row").count(), { timeout: 10_000 }).toBe(8);
    const verdict = await page.getByTestId("method-decision").first().innerText();
    expect(verdict).toMatch(/^(kept|not kept) \(StrictPareto/);
    expect(errors).toEqual([]);
  });
});
