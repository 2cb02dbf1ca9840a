import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConsole } from "../../src/console/server.ts";
import { haveChromium, launchChromium } from "../helpers/browser.ts";
import { hone } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";
import { requireTool } from "../helpers/requires.ts";

// `hone run` writes its one rollout into the run folder itself (trajectory.jsonl, programs/), not under
// rollouts/<id>/ as optimize does: its rollout page must still show the conversation, each program and their diffs.
const root = tempDir("hone-console-probe2-run-");
const runDir = join(root, "run1");
let server: Awaited<ReturnType<typeof startConsole>>;
let browser: Browser | undefined;

beforeAll(async () => {
  const run = (evals: string, out: string) =>
    hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", evals, "--out", out]);
  for (const made of await Promise.all([run("3", runDir), run("4", join(root, "run2"))])) expect(made.code, made.stderr).toBe(0);
  server = await startConsole({ root, port: 0 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const api = (path: string) => fetch(`${server.url}/api/runs/run1/rollouts/rollout${path}`);

describe("the rollout of a `hone run` folder", () => {
  it("serves its trajectory, programs and program diffs from the run folder", async () => {
    const lines = readFileSync(join(runDir, "trajectory.jsonl"), "utf8").trim().split("\n");
    const trajectory = await api("/trajectory?limit=500");
    expect(trajectory.status).toBe(200);
    const body = (await trajectory.json()) as { total: number; events: Record<string, unknown>[] };
    expect(body.total).toBe(lines.length);
    expect(body.events[0]).toEqual(JSON.parse(lines[0] as string));

    const program = await api("/artifact?path=programs/0002.py");
    expect(program.status).toBe(200);
    expect(await program.text()).toBe(readFileSync(join(runDir, "programs", "0002.py"), "utf8"));

    const diff = await api("/program-diff?from=1&to=2");
    expect(diff.status).toBe(200);
    expect(((await diff.json()) as { diff: string }).diff).toContain("programs/0002.py");

    // Only the run's own rollout lives in its folder: any other id is not found.
    expect((await fetch(`${server.url}/api/runs/run1/rollouts/other/trajectory`)).status).toBe(404);
  });

  it("compares two `hone run` runs by the measurement identities their rollouts recorded", async () => {
    const r = await fetch(`${server.url}/api/compare?run=run1&run=run2`);
    const { warnings } = (await r.json()) as { warnings: string[] };
    expect(warnings.filter((w) => w.includes("no measurement identity"))).toEqual([]);
    expect(warnings.some((w) => w.startsWith("run1 vs run2: budget"))).toBe(true);
  });

  it("shows the conversation and a program diff in the browser with no error", async (ctx) => {
    requireTool(ctx, "chromium");
    if (!haveChromium) return;
    browser = await launchChromium();
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && errors.push(`console: ${m.text()}`));
    await page.goto(`${server.url}/run/run1/rollout/rollout`);
    const evaluations = page.getByTestId("event-evaluation");
    await expect.poll(() => evaluations.count(), { timeout: 10_000 }).toBe(3);
    await evaluations.nth(1).getByRole("button", { name: "program" }).click();
    await expect.poll(() => evaluations.nth(1).locator("pre.file").count(), { timeout: 10_000 }).toBe(1);
    await evaluations.nth(1).getByTestId("program-diff-button").click();
    await expect.poll(() => page.getByTestId("program-diff").count(), { timeout: 10_000 }).toBe(1);
    expect(errors).toEqual([]);
  });
});
