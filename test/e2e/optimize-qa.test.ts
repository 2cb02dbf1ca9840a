import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { RunReader } from "../../src/console/run-reader.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

const DATA = join(ROOT, "test", "fixtures", "datasets");

const args = (method: string, out: string) => [
  "optimize",
  "--benchmark",
  "gsm8k",
  "--data-dir",
  DATA,
  "--train",
  "8",
  "--validation",
  "8",
  "--rounds",
  "2",
  "--proposals",
  "2",
  "--executor",
  "offline",
  "--proposer",
  "offline",
  "--method",
  method,
  "--cache",
  "off",
  "--out",
  out,
  "--json",
];

interface MeasurementRow {
  id: string;
  candidate_id: string;
  split: string;
  status: string;
  tasks: number;
  mean_score: number;
}

function records(dir: string) {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const measurements = db
    .prepare("SELECT id, candidate_id, split, status, tasks, mean_score FROM measurements ORDER BY id")
    .all() as MeasurementRow[];
  const perTask = new Map(
    (
      db.prepare("SELECT measurement_id AS id, COUNT(DISTINCT task_id) AS n FROM task_results GROUP BY measurement_id").all() as {
        id: string;
        n: number;
      }[]
    ).map((r) => [r.id, r.n]),
  );
  const candidates = db.prepare("SELECT id, commit_sha FROM candidates ORDER BY id").all() as {
    id: string;
    commit_sha: string | null;
  }[];
  const decisions = db.prepare("SELECT round, candidate_id, decision, rule FROM decisions").all() as { rule: string }[];
  const run = db.prepare("SELECT status, summary FROM runs").get() as { status: string; summary: string };
  db.close();
  return { measurements, perTask, candidates, decisions, run };
}

describe("hone optimize --benchmark (a QA benchmark searched on train, chosen one measured on validation)", () => {
  for (const method of ["greedy", "gepa"]) {
    it(`${method}: every candidate measured task by task on train, the choice on validation, replayed exactly`, async () => {
      const out = join(tempDir(), "run");
      const r = await hone(args(method, out), { timeoutMs: 240_000 });
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as { validation_score: number | null; best_score: number | null };
      const { measurements, perTask, candidates, decisions, run } = records(out);
      const train = measurements.filter((m) => m.split === "train");
      // The seed and every committed candidate have their own train measurement, 8 task results each.
      const measurable = candidates.filter((c) => c.commit_sha).map((c) => c.id);
      expect(train.map((m) => m.candidate_id).sort()).toEqual(measurable.sort());
      expect(measurable.length).toBeGreaterThan(1);
      for (const m of train) {
        expect(m).toMatchObject({ status: "finished", tasks: 8 });
        expect(perTask.get(m.id)).toBe(8);
      }
      expect(decisions.length).toBe(measurable.length - 1);
      // A candidate the method dropped is rejected by the method's rule; one it kept, by the paired noise rule.
      const kdb = new Database(join(out, "hone.db"), { readonly: true });
      const keeps = new Map(
        (
          kdb.prepare("SELECT candidate_id, kept, rule FROM method_state").all() as {
            candidate_id: string;
            kept: number;
            rule: string;
          }[]
        ).map((k) => [k.candidate_id, k]),
      );
      kdb.close();
      for (const d of decisions as { candidate_id: string; rule: string }[]) {
        const k = keeps.get(d.candidate_id);
        expect(d.rule, d.candidate_id).toBe(k?.kept ? "paired_t_interval" : k?.rule);
      }
      // The final choice is measured once on validation, and the summary says so.
      const validation = measurements.filter((m) => m.split === "validation");
      expect(validation).toHaveLength(1);
      expect(validation[0]).toMatchObject({ status: "finished", tasks: 8 });
      expect(perTask.get(validation[0]?.id as string)).toBe(8);
      const summary = JSON.parse(run.summary);
      expect(run.status).toBe("finished");
      expect(summary.validation).toMatchObject({ tasks: 8, score: validation[0]?.mean_score });
      expect(result.validation_score).toBe(validation[0]?.mean_score);
      expect(JSON.parse(readFileSync(join(out, "best", "meta.json"), "utf8")).validation_score).toBe(validation[0]?.mean_score);
      // Train questions and validation questions are disjoint.
      const db = new Database(join(out, "hone.db"), { readonly: true });
      const ids = (m: string) =>
        (db.prepare("SELECT task_id FROM task_results WHERE measurement_id = ?").all(m) as { task_id: string }[]).map(
          (x) => x.task_id,
        );
      const trainIds = new Set(ids("r00-seed"));
      const validationIds = ids(validation[0]?.id as string);
      db.close();
      expect(trainIds.size).toBe(8);
      expect(validationIds.filter((t) => trainIds.has(t))).toEqual([]);

      // The console shows the run: its benchmark as the target, its method, each candidate's keep decision.
      const reader = new RunReader(out);
      const page = JSON.parse(reader.runPageJson("run") as string) as { task: string; method: string };
      expect(page.task).toBe("gsm8k");
      expect(page.method).toContain(method);
      const shown = reader.candidates(0, 100).items as { id: string; method_decision: { kept: boolean } | null }[];
      reader.close();
      for (const c of shown.filter((x) => keeps.has(x.id)))
        expect(c.method_decision?.kept, c.id).toBe(keeps.get(c.id)?.kept === 1);

      const replay = await hone(["replay", out, "--out", join(tempDir(), "replay")], { timeoutMs: 240_000 });
      expect(replay.code, replay.stderr + replay.stdout).toBe(0);
      expect(replay.stdout).toMatch(/replay matches/);
    }, 300_000);
  }

  it("promotes a candidate whose gain on the same train questions clears the noise, read per task by the method, and measures it on validation", async () => {
    // A method program that proposes the oracle harness as a folder, after reading the seed's per-task scores.
    const method = tempDir();
    cpSync(join(ROOT, "harnesses", "oracle"), join(method, "oracle"), { recursive: true });
    writeFileSync(
      join(method, "method.json"),
      JSON.stringify({ name: "oracle-proposer", entrypoint: "python3 m.py", timeout: 60 }),
    );
    writeFileSync(
      join(method, "m.py"),
      [
        "import json, os, shutil, sys",
        "req = json.load(sys.stdin)",
        "seen = [json.loads(l) for l in open(os.path.join(req['archive_dir'], 'candidates.jsonl'))]",
        "assert len(seen[0]['per_task']) == 8, seen",
        "out = os.path.join(req['output_dir'], 'oracle')",
        "shutil.copytree('oracle', out)",
        "json.dump({'parent': 'r00-seed', 'rationale': 'the oracle'}, open(os.path.join(out, 'proposal.json'), 'w'))",
      ].join("\n"),
    );
    const out = join(tempDir(), "run");
    const a = args(method, out);
    a[a.indexOf("--rounds") + 1] = "1";
    a[a.indexOf("--proposals") + 1] = "1";
    const r = await hone(a, { timeoutMs: 240_000 });
    expect(r.code, r.stderr).toBe(0);
    const { measurements, decisions, run } = records(out);
    // Every train question gained (no variation in the gain): the paired interval lies above zero, and 8 of 8 gained
    // is a split a fair coin gives 1 time in 128 (4 of 4, 1 in 8, would not be promoted).
    expect(decisions).toEqual([{ round: 1, candidate_id: "r01-k0", decision: "promote", rule: "paired_t_interval" }]);
    const score = (id: string) => measurements.find((m) => m.id === id)?.mean_score;
    expect(score("r01-k0")).toBeGreaterThan(score("r00-seed") as number);
    const summary = JSON.parse(run.summary);
    expect(summary).toMatchObject({ best_candidate: "r01-k0", validation: { tasks: 8, score: score("r01-k0-validation") } });
    expect(JSON.parse(r.stdout).validation_score).toBe(score("r01-k0-validation"));
  }, 300_000);

  it("refuses --task with --benchmark (exit 2)", async () => {
    const r = await hone(["optimize", "--task", "circle-packing", "--benchmark", "gsm8k", "--out", join(tempDir(), "x")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--task and --benchmark are exclusive/);
  });
});
