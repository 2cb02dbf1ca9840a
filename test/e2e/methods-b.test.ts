import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone, killAfterLine, optimizeArgs } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// gepa, ace and skillopt end to end: `hone optimize --method <name>` on circle packing with the offline model
// (2 rounds, 2 proposals, 3 evaluator calls per rollout), every proposal measured, the loop's decisions and the
// method's keep decisions and state recorded in hone.db; a gepa run replays exactly.

interface StateRow {
  candidate_id: string;
  method: string;
  parents: string;
  kept: number | null;
  rule: string | null;
  state: string | null;
}

function records(run: string) {
  const db = new Database(join(run, "hone.db"), { readonly: true });
  const q = <T>(sql: string) => db.prepare(sql).all() as T[];
  const out = {
    candidates: q<{ id: string; round: number; status: string }>("SELECT id, round, status FROM candidates ORDER BY id"),
    rollouts: q<{ candidate_id: string; status: string; evals_used: number }>(
      "SELECT candidate_id, status, evals_used FROM rollouts ORDER BY candidate_id",
    ),
    decisions: q<{ round: number; candidate_id: string; decision: string }>(
      "SELECT round, candidate_id, decision FROM decisions",
    ),
    states: q<StateRow>("SELECT candidate_id, method, parents, kept, rule, state FROM method_state ORDER BY candidate_id"),
  };
  db.close();
  return out;
}

const args = (method: string, dir: string) => [
  ...optimizeArgs({ rounds: 2, proposals: 2, maxEvals: 3, cache: ["--cache-dir", join(dir, "cache")], out: join(dir, "run") }),
  "--method",
  method,
];

async function optimize(method: string, dir: string) {
  const run = join(dir, "run");
  const r = await hone(args(method, dir));
  expect(r.code, r.stderr).toBe(0);
  const recs = records(run);
  const proposed = recs.candidates.filter((c) => c.round > 0);
  // At least one proposal per round, each measured by a completed rollout within the evaluator budget.
  expect(new Set(proposed.map((c) => c.round))).toEqual(new Set([1, 2]));
  for (const c of proposed) {
    expect(c.status, c.id).toBe("valid");
    const rollout = recs.rollouts.find((x) => x.candidate_id === c.id);
    expect(rollout?.status, c.id).toBe("completed");
    expect(rollout?.evals_used).toBeLessThanOrEqual(3);
  }
  // The loop's decision on every candidate, and the method's keep decision and state on every one.
  for (const c of recs.candidates)
    expect(
      recs.decisions.some((d) => d.candidate_id === c.id),
      c.id,
    ).toBe(true);
  expect(recs.states.map((s) => s.candidate_id)).toEqual(recs.candidates.map((c) => c.id));
  for (const s of recs.states) {
    expect(s.method).toBe(method);
    expect(s.kept, s.candidate_id).not.toBeNull();
  }
  const mine = recs.states.filter((s) => s.candidate_id !== "r00-seed");
  return { run, recs, mine, states: mine.map((s) => JSON.parse(s.state ?? "{}")) };
}

describe("gepa, ace and skillopt through hone optimize (CLI, offline model)", () => {
  it("gepa: reflective rewrites of the frontier's components, kept by the minibatch rule, and a replay that matches", {
    timeout: 240_000,
  }, async () => {
    const dir = tempDir();
    const { run, mine, states } = await optimize("gepa", dir);
    expect(mine.length).toBe(4);
    for (const [i, s] of mine.entries()) {
      expect(s.rule).toBe("gepa_minibatch_strict");
      expect(states[i].gepa.kind).toBe("reflective");
      expect(states[i].gepa.minibatch).toContain("circle-packing");
    }
    // A round-2 parent is in round 1's pool: the seed or a round-1 child GEPA kept.
    const pool = new Set([
      "r00-seed",
      ...mine.filter((s) => s.candidate_id.startsWith("r01") && s.kept === 1).map((s) => s.candidate_id),
    ]);
    for (const s of mine.filter((x) => x.candidate_id.startsWith("r02"))) expect(pool.has(JSON.parse(s.parents)[0])).toBe(true);
    const replay = await hone(["replay", run, "--out", join(dir, "replayed"), "--json"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true, differences: [] });
  });

  it("ace: one playbook step per round, reflector tags and curator deltas recorded", { timeout: 180_000 }, async () => {
    const { mine, states } = await optimize("ace", tempDir());
    expect(mine.map((s) => [s.candidate_id, s.rule, s.kept])).toEqual([
      ["r01-k0", "ace_step", 1],
      ["r02-k0", "ace_step", 1],
    ]);
    expect(JSON.parse(mine[1]?.parents ?? "[]")).toEqual(["r01-k0"]);
    expect(states[0].ace.added).toEqual(["sai-00001"]);
    expect(states[1].ace.added).toEqual(["sai-00002"]);
    expect(Object.keys(states[1].ace.counters).sort()).toEqual(["sai-00001", "sai-00002"]);
  });

  it("skillopt: bounded edits to the discovery skill, gated against the current skill; kill -9 and --resume end the same", {
    timeout: 300_000,
  }, async () => {
    const { recs, mine, states } = await optimize("skillopt", tempDir());
    expect(mine.map((s) => s.candidate_id)).toEqual(["r01-k0", "r02-k0"]);
    for (const [i, s] of mine.entries()) {
      expect(s.rule).toBe("skillopt_gate_strict");
      const m = states[i].skillopt;
      expect(m.skill).toBe("discovery");
      expect(m.edits.length).toBeGreaterThan(0);
      expect(m.edits.length).toBeLessThanOrEqual(m.budget);
    }
    // Step 2 edits the skill the gate left current: r01-k0 if it was accepted, else the seed.
    expect(states[1].skillopt.current).toBe(mine[0]?.kept === 1 ? "r01-k0" : "r00-seed");

    // Killed once round 1's candidate has been measured (its keep decision may not be recorded yet), then resumed:
    // the method's decisions and state are the uninterrupted run's.
    const dir = tempDir();
    await killAfterLine(args("skillopt", dir), /^ {2}r01-k0: /);
    const resumed = await hone(["optimize", "--resume", join(dir, "run"), "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const got = records(join(dir, "run"));
    expect(got.states).toEqual(recs.states);
    expect(got.candidates).toEqual(recs.candidates);
  });
});
