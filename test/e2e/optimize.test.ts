import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { HarnessRepo } from "../../src/store/git.ts";
import { hone, killAfterLine, optimizeArgs } from "../helpers/cli.ts";
import { makeTask, tempDir } from "../helpers/fixtures.ts";

const ARGS = optimizeArgs({
  rounds: 3,
  proposals: 4,
  maxEvals: 10,
  cache: null,
  json: false,
  extra: ["--executor-model", "offline", "--proposer-model", "offline"],
});

function records(dir: string) {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const rounds = db
    .prepare("SELECT round, incumbent_commit, incumbent_score, best_score, moved FROM rounds ORDER BY round")
    .all() as { round: number; incumbent_commit: string; incumbent_score: number; best_score: number; moved: number }[];
  const candidates = db
    .prepare("SELECT id, status, commit_sha, score, reward, advantage, changed FROM candidates ORDER BY id")
    .all() as {
    id: string;
    status: string;
    commit_sha: string | null;
    score: number | null;
    reward: number | null;
    advantage: number | null;
  }[];
  const rollouts = db
    .prepare("SELECT id, candidate_id, seed, status, best_score, evals_used FROM rollouts ORDER BY id")
    .all() as { id: string; evals_used: number }[];
  const evaluations = db.prepare("SELECT COUNT(*) AS n FROM evaluations").get() as { n: number };
  const run = db.prepare("SELECT status, summary FROM runs").get() as { status: string; summary: string };
  db.close();
  return { rounds, candidates, rollouts, evaluations: evaluations.n, run };
}

describe("hone optimize (CLI, offline executor and proposer)", () => {
  it("three rounds beat the round-0 harness, the ratchet never goes back, and every number traces to hone.db and git", {
    timeout: 180_000,
  }, async () => {
    const out = join(tempDir(), "cp");
    const r = await hone([...ARGS, "--out", out, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    const rec = records(out);
    expect(rec.run.status).toBe("finished");
    const round0Best = rec.rounds[0]?.best_score as number;
    expect(summary.best_score).toBeGreaterThan(round0Best);
    const incumbents = [...rec.rounds.map((x) => x.incumbent_score), summary.best_score];
    for (let i = 1; i < incumbents.length; i++) expect(incumbents[i]).toBeGreaterThanOrEqual(incumbents[i - 1] as number);

    // The printed summary is the records: rounds, candidates, rewards.
    expect(summary.rounds.map((x: { incumbentScore: number }) => x.incumbentScore)).toEqual(
      rec.rounds.map((x) => x.incumbent_score),
    );
    const repo = new HarnessRepo(join(out, "harnesses.git"));
    const main = repo.resolve("refs/heads/main") as string;
    expect(JSON.parse(readFileSync(join(out, "best", "meta.json"), "utf8")).commit).toBe(main);
    for (const c of rec.candidates) {
      if (c.status === "invalid") expect(c.commit_sha).toBeNull();
      else expect(repo.resolve(`refs/candidates/${c.id}`)).toBe(c.commit_sha);
    }
    // The incumbent moved only by fast-forward: every round's incumbent is an ancestor of main.
    for (const x of rec.rounds) expect(repo.isAncestor(x.incumbent_commit, main)).toBe(true);
    // Each rollout used at most the budget and its evaluations are all recorded.
    expect(rec.rollouts.every((x) => x.evals_used <= 10)).toBe(true);
    expect(rec.evaluations).toBe(rec.rollouts.reduce((a, x) => a + x.evals_used, 0));
    expect(readFileSync(join(out, "best_program.py"), "utf8")).toContain("EVOLVE-BLOCK-START");

    // best/ is a package that runs again.
    const again = await hone([
      "run",
      "--harness",
      join(out, "best"),
      "--task",
      "circle-packing",
      "--model",
      "offline",
      "--max-evals",
      "4",
      "--out",
      join(tempDir(), "again"),
      "--json",
    ]);
    expect(again.code, again.stderr).toBe(0);

    // log and diff read the same records.
    const log = await hone(["log", out]);
    expect(log.stdout).toMatch(/round 3/);
    const moved = rec.candidates.find((c) => c.commit_sha === main);
    if (moved && moved.id !== "r00-seed") {
      const diff = await hone(["diff", out, moved.id]);
      expect(diff.stdout).toMatch(/^diff --git/m);
    }
  });

  it("resumes after kill -9 at any point and reaches the same final state as an uninterrupted run", {
    timeout: 400_000,
  }, async () => {
    const small = optimizeArgs({ rounds: 2, proposals: 3, maxEvals: 6, seed: 5, cache: null, json: false });
    const reference = join(tempDir(), "ref");
    expect((await hone([...small, "--out", reference, "--json"])).code).toBe(0);
    const want = records(reference);
    // Killed right after it printed each of these progress lines: at its start, during round 0's rollout, after a
    // rollout of round 1, while round 2 rolls out. Wherever the kill lands, the resumed run must end the same.
    for (const [i, after] of [/^optimizing /, /^round 0: /, /^ {2}r01-k\d: /, /^ {2}proposals: .*$/].entries()) {
      const out = join(tempDir(), `kill-${i}`);
      await killAfterLine([...small, "--out", out], after, i === 3 ? 2 : 1);
      expect(existsSync(join(out, "hone.db"))).toBe(true);
      const resumed = await hone(["optimize", "--resume", out, "--json"]);
      expect(resumed.code, resumed.stderr).toBe(0);
      const got = records(out);
      expect(got.candidates).toEqual(want.candidates);
      expect(
        got.rounds.map(({ round, incumbent_commit, incumbent_score, moved }) => ({
          round,
          incumbent_commit,
          incumbent_score,
          moved,
        })),
      ).toEqual(
        want.rounds.map(({ round, incumbent_commit, incumbent_score, moved }) => ({
          round,
          incumbent_commit,
          incumbent_score,
          moved,
        })),
      );
      expect(got.rollouts.map((x) => x.id)).toEqual(want.rollouts.map((x) => x.id));
      expect(got.evaluations).toBe(want.evaluations);
      expect(JSON.parse(got.run.summary).best_commit).toBe(JSON.parse(want.run.summary).best_commit);
    }
  });

  it("pairs each candidate with its parent at the same seed with --paired", async () => {
    const out = join(tempDir(), "paired");
    const r = await hone(optimizeArgs({ rounds: 1, proposals: 2, maxEvals: 4, cache: null, out, extra: ["--paired"] }));
    expect(r.code, r.stderr).toBe(0);
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const rows = db.prepare("SELECT id, candidate_id, kind, seed FROM rollouts WHERE round = 1 ORDER BY id").all() as {
      id: string;
      candidate_id: string;
      kind: string;
      seed: number;
    }[];
    db.close();
    const parents = rows.filter((x) => x.kind === "parent");
    expect(parents.length).toBe(rows.filter((x) => x.kind === "candidate").length);
    for (const p of parents)
      expect(p.seed).toBe(rows.find((x) => x.kind === "candidate" && x.candidate_id === p.candidate_id)?.seed);
  });

  it("reads its options from a config file, refuses a bad one with the field, and refuses an existing --out", {
    timeout: 180_000,
  }, async () => {
    const dir = tempDir();
    const cfg = join(dir, "hone.yaml");
    writeFileSync(
      cfg,
      "task: circle-packing\nrounds: 1\nproposals: 2\nmax_evals: 4\nmethod_params: {diversity: true}\nout: ./run\n",
    );
    const r = await hone(["optimize", "--config", cfg, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).run_dir).toBe(join(dir, "run"));
    // Two independent samples, each with its own prompt: with diversity, slot 0 asks for a tool, slot 1 a skill.
    const db = new Database(join(dir, "run", "hone.db"), { readonly: true });
    const row = db.prepare("SELECT proposer_prompt, proposer_completion FROM rounds WHERE round = 1").get() as {
      proposer_prompt: string;
      proposer_completion: string;
    };
    db.close();
    const prompts = JSON.parse(row.proposer_prompt) as { content: string }[][];
    expect(prompts).toHaveLength(2);
    expect(prompts[0]?.at(-1)?.content).toMatch(/Exploration role for this proposal: a new capability tool/);
    expect(prompts[1]?.at(-1)?.content).toMatch(/Exploration role for this proposal: a skill of another solution family/);
    expect(JSON.parse(row.proposer_completion).samples).toHaveLength(2);
    writeFileSync(cfg, "task: circle-packing\nrounds: zero\n");
    const bad = await hone(["optimize", "--config", cfg]);
    expect(bad.code).toBe(5);
    expect(bad.stderr).toMatch(/hone.yaml \(rounds\)/);
    const again = await hone(["optimize", "--task", "circle-packing", "--out", join(dir, "run")]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
  });

  it("a round with fewer valid proposals than the gate asks is recorded as failed: nothing rolled out, the incumbent stays, and it replays", {
    timeout: 240_000,
  }, async () => {
    // Seed 1's four samples hold a duplicate (refused), so `all` of 4 is not met.
    const out = join(tempDir(), "gate");
    const args = optimizeArgs({ rounds: 1, proposals: 4, maxEvals: 2, seed: 1, out, extra: ["--noise-repeats", "1"] });
    const r = await hone([...args, "--param", "proposal_gate=all"]);
    expect(r.code, r.stderr).toBe(0);
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const round = db.prepare("SELECT status, moved, incumbent_commit FROM rounds WHERE round = 1").get() as {
      status: string;
      moved: number;
      incumbent_commit: string;
    };
    const seed = db.prepare("SELECT commit_sha FROM candidates WHERE id = 'r00-seed'").get() as { commit_sha: string };
    const decisions = db.prepare("SELECT rule, decision FROM decisions WHERE round = 1").all();
    const rollouts = db.prepare("SELECT COUNT(*) AS n FROM rollouts WHERE candidate_id LIKE 'r01-%'").get() as { n: number };
    const credited = db
      .prepare("SELECT COUNT(*) AS n FROM candidates WHERE round = 1 AND (reward IS NOT NULL OR advantage IS NOT NULL)")
      .get() as { n: number };
    db.close();
    expect(round).toMatchObject({ status: "failed", moved: 0 });
    expect(decisions).toEqual(Array.from({ length: 4 }, () => ({ rule: "proposal_gate", decision: "unmeasurable" })));
    expect(rollouts.n).toBe(0);
    expect(credited.n).toBe(0);
    const summary = JSON.parse(r.stdout) as { best_score: number; rounds: { round: number; incumbentScore: number }[] };
    expect(summary.best_score).toBe(summary.rounds[1]?.incumbentScore); // the incumbent round 1 started from
    expect(round.incumbent_commit).toBe(seed.commit_sha); // the harness stays the seed's
    const replay = await hone(["replay", out, "--json"]);
    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
  });

  it("refuses a bad flag value by the flag's name, exit 2, before creating anything", async () => {
    const out = join(tempDir(), "never");
    for (const [flag, value, says] of [
      ["--rounds", "abc", "--rounds abc: a whole number from 1 to 1000"],
      ["--max-evals", "-3", "--max-evals -3: a whole number from 1 to 10000"],
    ] as const) {
      const r = await hone(["optimize", "--task", "circle-packing", flag, value, "--out", out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(says);
      expect(existsSync(out)).toBe(false);
    }
    const gate = await hone([
      "optimize",
      "--task",
      "circle-packing",
      "--proposals",
      "4",
      "--param",
      "proposal_gate=min9",
      "--out",
      out,
    ]);
    expect(gate.code, gate.stderr).toBe(2);
    expect(gate.stderr).toMatch(/--param proposal_gate=min9: .*min<N> with 1 <= N <= 4/);
    expect(existsSync(out)).toBe(false);
  });

  it("a broken evaluator (NaN on the seed program) is exit 8 and leaves no run folder, so the rerun needs no --resume", async () => {
    const task = makeTask("def evaluate(program_path):\n    return {'combined_score': float('nan')}\n");
    const out = join(tempDir(), "broken");
    const args = ["optimize", "--task", task, "--rounds", "1", "--proposals", "2", "--max-evals", "3", "--out", out];
    const r = await hone(args);
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/the evaluator failed on the seed program .*"combined_score" is nan/);
    expect(existsSync(out)).toBe(false);
    const again = await hone(args);
    expect(again.code).toBe(8);
    expect(again.stderr).not.toMatch(/--resume/);
    expect(existsSync(out)).toBe(false);
  });
});
