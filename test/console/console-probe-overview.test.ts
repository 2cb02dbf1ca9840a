import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunRegistry } from "../../src/console/runs.ts";
import { consoleApp } from "../../src/console/server.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// The runs list for runs made by `hone run`, `hone eval` and `hone train`: each names the model, the task and the
// score its own records hold (their config and summary are shaped differently from an optimize run's).
const root = tempDir("hone-console-probe-overview-");
const DATA = join(ROOT, "test", "fixtures", "datasets");
let registry: RunRegistry;

type Item = { id: string; task: string | null; executor: string | null; proposer: string | null; best_score: number | null };

function records(run: string) {
  const db = new Database(join(root, run, "hone.db"), { readonly: true });
  const row = db.prepare("SELECT config, summary FROM runs").get() as { config: string; summary: string };
  db.close();
  return { config: JSON.parse(row.config), summary: JSON.parse(row.summary) };
}

beforeAll(async () => {
  const made = await Promise.all([
    hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "2", "--out", join(root, "run1")]),
    hone(
      ["eval", "--harness", join(ROOT, "harnesses", "qa"), "--benchmark", "gsm8k", "--split", "test", "--limit", "5"].concat([
        "--model",
        "offline",
        "--data-dir",
        DATA,
        "--out",
        join(root, "eval1"),
      ]),
    ),
  ]);
  writeFileSync(
    join(root, "train.yaml"),
    `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: validation, limit: 4, data_dir: ${DATA}}\nestimator: {kind: llm, proposer: {model: offline}}\ncriterion: {kind: strict_pareto}\npatch_surface: ["prompt.md"]\n`,
  );
  made.push(await hone(["train", "--config", join(root, "train.yaml"), "--epochs", "1", "--out", join(root, "train1")]));
  for (const r of made) expect(r.code, r.stderr).toBe(0);
  registry = new RunRegistry(root);
}, 180_000);

afterAll(() => registry?.close());

describe("the runs list for run, eval and train directories", () => {
  it("shows the model, task and score each run recorded", async () => {
    const r = await consoleApp(registry, { root }).request("/api/runs", { headers: { host: "127.0.0.1:4460" } });
    const items = new Map(((await r.json()) as { items: Item[] }).items.map((i) => [i.id, i]));
    const run = records("run1");
    expect(items.get("run1")).toMatchObject({
      task: run.config.task,
      executor: run.config.model,
      best_score: run.summary.best_score,
    });
    const evaluation = records("eval1");
    expect(items.get("eval1")).toMatchObject({
      task: evaluation.config.benchmark,
      executor: evaluation.config.model,
      best_score: evaluation.summary.accuracy,
    });
    const train = records("train1");
    expect(items.get("train1")).toMatchObject({
      task: train.config.panel.benchmark,
      executor: train.config.model.model,
      proposer: train.config.estimator.proposer.model,
    });
    for (const id of ["run1", "eval1", "train1"]) expect(items.get(id)?.executor, id).toBe("offline");
  });
});
