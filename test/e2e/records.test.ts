import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { RunReader } from "../../src/console/run-reader.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir, write } from "../helpers/fixtures.ts";
import { sumQuestions } from "../helpers/qa-data.ts";

// Every run kind is a record: train (with resume after kill -9), eval and run write hone.db, and hone log,
// receipt, replay and the console's reader work on each.
const strategy = (to: string, from: string) =>
  `diff --git a/prompt.md b/prompt.md\n--- a/prompt.md\n+++ b/prompt.md\n@@ -2,3 +2,3 @@\n final_answer exactly once with your answer in the requested format.\n \n-hone-hint: qa_strategy=${from}\n+hone-hint: qa_strategy=${to}\n`;

function trainConfig(data: string): string {
  const dir = tempDir();
  write(join(dir, "sum.diff"), strategy("sum", "last"));
  write(join(dir, "product.diff"), strategy("product", "sum"));
  write(join(dir, "difference.diff"), strategy("difference", "sum"));
  write(
    join(dir, "train.yaml"),
    `harness: ${join(ROOT, "harnesses", "qa")}\npanel: {benchmark: gsm8k, split: test, limit: 6, data_dir: ${data}}\nestimator: {kind: patch_queue, patches: [sum.diff, product.diff, difference.diff]}\ncriterion: {kind: strict_pareto}\nconcurrency: 2\n`,
  );
  return join(dir, "train.yaml");
}

function records(dir: string) {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const q = (sql: string) => db.prepare(sql).all();
  const r = {
    run: q("SELECT kind, status FROM runs"),
    rounds: q("SELECT round, status, incumbent_commit, incumbent_score, best_score, moved FROM rounds ORDER BY round"),
    candidates: q(
      "SELECT id, round, status, commit_sha, parent_commit, content_hash, gate_error, score FROM candidates ORDER BY id",
    ),
    decisions: q("SELECT round, candidate_id, decision, rule, reason, score FROM decisions ORDER BY round"),
    measurements: q(
      "SELECT id, candidate_id, commit_sha, status, tasks, solved, infra, mean_score FROM measurements ORDER BY id",
    ),
    tasks: q(
      "SELECT measurement_id, task_id, idx, job_id, status, score, steps, tokens, error FROM task_results ORDER BY measurement_id, idx",
    ),
  };
  db.close();
  return r;
}

const taskResultsSoFar = (dir: string): number => {
  if (!existsSync(join(dir, "hone.db"))) return 0;
  try {
    const db = new Database(join(dir, "hone.db"), { readonly: true, fileMustExist: true });
    const n = (db.prepare("SELECT COUNT(*) AS n FROM task_results").get() as { n: number }).n;
    db.close();
    return n;
  } catch {
    return 0; // tables not there yet
  }
};

/** Starts `hone train`, kills it with SIGKILL once `atResults` task results are recorded (or lets it finish). */
async function killedAt(args: string[], out: string, atResults: number): Promise<boolean> {
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, "bin", "hone.js"), ...args, "--out", out, "--json"], {
    cwd: ROOT,
    stdio: "ignore",
  });
  // The exit listener is registered before any kill: whichever comes first, the test waits for the real exit.
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let done = false;
  void exited.then(() => {
    done = true;
  });
  while (!done && taskResultsSoFar(out) < atResults) await new Promise((r) => setTimeout(r, 25));
  const killed = !done;
  if (killed) child.kill("SIGKILL");
  await exited;
  return killed;
}

describe("hone train records every measurement and verdict, and resumes after kill -9", () => {
  const data = sumQuestions(6);

  it("reaches the same decisions and per-task results as an uninterrupted run, wherever it is killed", {
    timeout: 600_000,
  }, async () => {
    const config = trainConfig(data);
    const args = ["train", "--config", config, "--epochs", "3"];
    const reference = join(tempDir(), "reference");
    const r = await hone([...args, "--out", reference, "--json"], { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const want = records(reference);
    expect(want.run).toEqual([{ kind: "train", status: "finished" }]);
    expect(want.decisions.map((d) => (d as { decision: string }).decision)).toEqual(["promote", "reject", "reject"]);
    expect(want.measurements.map((m) => (m as { solved: number }).solved)).toEqual([0, 6, 0, 0]);
    expect(want.tasks.length).toBe(24);
    const printed = JSON.parse(r.stdout);
    expect(printed.epochs.map((e: { promoted: boolean }) => e.promoted)).toEqual([true, false, false]);

    let unfinished = 0;
    for (const at of [1, 7, 13, 19]) {
      const out = join(tempDir(), `killed-${at}`);
      if (!(await killedAt(args, out, at)) || !existsSync(join(out, "hone.db"))) continue;
      if ((records(out).run[0] as { status: string }).status === "running") unfinished++;
      const resumed = await hone(["train", "--resume", out, "--epochs", "3", "--json"], { timeoutMs: 300_000 });
      expect(resumed.code, `${at}: ${resumed.stderr}`).toBe(0);
      const got = records(out);
      expect(got.rounds).toEqual(want.rounds);
      expect(got.candidates).toEqual(want.candidates);
      expect(got.decisions).toEqual(want.decisions);
      expect(got.measurements).toEqual(want.measurements);
      expect(got.tasks).toEqual(want.tasks);
    }
    expect(unfinished).toBeGreaterThanOrEqual(3);

    // log, receipt, replay and the console's reader on a train run.
    const log = await hone(["log", reference]);
    expect(log.stdout).toMatch(/epoch 1 .* promote by StrictPareto.*: solves 6 more task\(s\) {2}→ moved/);
    expect(log.stdout).toMatch(/epoch-01 {2}######/);
    const receipt = JSON.parse((await hone(["receipt", reference, "--json"])).stdout);
    expect(receipt.run.kind).toBe("train");
    expect(receipt.measurements).toMatchObject({ qa_measurements: 4, task_results: 24, qa_pending: 0 });
    expect(receipt.models[0].calls).toBeGreaterThan(0);
    const replay = await hone(["replay", reference, "--json"], { timeoutMs: 300_000 });
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ kind: "train", matches: true });
    const reader = new RunReader(reference);
    expect(reader.overview()?.kind).toBe("train");
    expect(reader.candidates(0, 50).total).toBe(4);
    reader.close();
  });
});

describe("hone eval and hone run write run directories", () => {
  it("eval: every task's result is in hone.db; log, receipt, replay and the reader work", { timeout: 300_000 }, async () => {
    const data = sumQuestions(5);
    const out = join(tempDir(), "eval");
    const r = await hone(
      ["eval", "--harness", "harnesses/qa", "--benchmark", "gsm8k", "--split", "test", "--model", "offline"].concat([
        "--data-dir",
        data,
        "--out",
        out,
        "--json",
      ]),
    );
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    const rec = records(out);
    expect(rec.run).toEqual([{ kind: "eval", status: "finished" }]);
    expect(rec.tasks.map((t) => (t as { task_id: string }).task_id)).toEqual(summary.results.map((x: { id: string }) => x.id));
    expect(rec.measurements).toMatchObject([{ id: "harness", status: "finished", tasks: 5 }]);
    expect((await hone(["log", out])).stdout).toMatch(/gsm8k\/test: solved \d of 5/);
    expect(JSON.parse((await hone(["receipt", out, "--json"])).stdout).settings.benchmark).toBe("gsm8k");
    const replay = await hone(["replay", out, "--json"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ kind: "eval", matches: true });
    const again = await hone(["eval", "--harness", "harnesses/qa", "--benchmark", "gsm8k", "--data-dir", data, "--out", out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
  });

  it("run: the rollout, its evaluations and model calls are in hone.db; it replays exactly", { timeout: 300_000 }, async () => {
    const out = join(tempDir(), "run");
    const r = await hone(["run", "--task", "circle-packing", "--model", "offline", "--max-evals", "4", "--out", out, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const rollout = db.prepare("SELECT id, dir, status, evals_used FROM rollouts").get();
    const evaluations = (db.prepare("SELECT COUNT(*) AS n FROM evaluations").get() as { n: number }).n;
    db.close();
    expect(rollout).toEqual({ id: "rollout", dir: ".", status: "completed", evals_used: 4 });
    expect(evaluations).toBe(4);
    expect((await hone(["log", out])).stdout).toMatch(/rollout rollout: completed/);
    expect(JSON.parse((await hone(["receipt", out, "--json"])).stdout).run.kind).toBe("run");
    const replay = await hone(["replay", out, "--json"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ kind: "run", matches: true });
    const reader = new RunReader(out);
    expect(reader.overview()?.kind).toBe("run");
    reader.close();
  });
});
