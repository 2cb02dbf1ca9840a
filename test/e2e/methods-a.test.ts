import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone, killAfterLine, optimizeArgs } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

interface MethodRow {
  candidate_id: string;
  method: string;
  parents: string;
  kept: number | null;
  rule: string | null;
  reason: string | null;
  state: string | null;
}

function records(dir: string) {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const candidates = db.prepare("SELECT id, round, status, commit_sha, score FROM candidates ORDER BY id").all() as {
    id: string;
    round: number;
    status: string;
    commit_sha: string | null;
    score: number | null;
  }[];
  const rollouts = db
    .prepare("SELECT id, candidate_id, status, best_score, evals_used FROM rollouts WHERE kind = 'candidate' ORDER BY id")
    .all() as { id: string; candidate_id: string; status: string; best_score: number | null; evals_used: number }[];
  const methodState = db
    .prepare("SELECT candidate_id, method, parents, kept, rule, reason, state FROM method_state ORDER BY candidate_id")
    .all() as MethodRow[];
  const rounds = db.prepare("SELECT round, incumbent_commit, incumbent_score, moved FROM rounds ORDER BY round").all();
  const evaluations = (db.prepare("SELECT COUNT(*) AS n FROM evaluations").get() as { n: number }).n;
  const run = db.prepare("SELECT status, summary FROM runs").get() as { status: string; summary: string };
  db.close();
  return { candidates, rollouts, methodState, rounds, evaluations, run };
}

const stateOf = (rows: MethodRow[], id: string) =>
  JSON.parse(rows.find((r) => r.candidate_id === id)?.state ?? "null") as Record<string, unknown> | null;

/** The method ran end to end: every round's proposals were gated, measured by a rollout, and decided by its rule. */
function expectMeasuredAndDecided(rec: ReturnType<typeof records>, method: string, rule: RegExp) {
  expect(rec.run.status).toBe("finished");
  const proposed = rec.candidates.filter((c) => c.round > 0);
  expect(proposed.filter((c) => c.round === 1).length).toBeGreaterThan(0);
  expect(proposed.filter((c) => c.round === 2).length).toBeGreaterThan(0);
  for (const c of proposed.filter((x) => x.status === "valid")) {
    const r = rec.rollouts.find((x) => x.candidate_id === c.id);
    expect(r?.status, c.id).toBe("completed");
    expect(r?.best_score, c.id).toEqual(expect.any(Number));
    expect(r?.evals_used).toBeLessThanOrEqual(3);
  }
  for (const c of rec.candidates) {
    const row = rec.methodState.find((m) => m.candidate_id === c.id);
    expect(row, `${c.id} has no method_state row`).toBeDefined();
    expect(row?.method).toBe(method);
    expect(row?.kept, c.id).not.toBeNull();
    expect(row?.rule ?? "", c.id).toMatch(c.status === "invalid" ? /./ : rule);
  }
}

const small = (method: string, proposals: number, extra: string[] = [], cache = ["--cache", "off"]) =>
  optimizeArgs({ rounds: 2, proposals, maxEvals: 3, seed: 3, json: false, cache, extra: ["--method", method, ...extra] });

/** What must come out the same after a kill and --resume. */
const finalState = (rec: ReturnType<typeof records>) => ({
  candidates: rec.candidates,
  methodState: rec.methodState,
  rounds: rec.rounds,
  rollouts: rec.rollouts.map((r) => r.id),
  evaluations: rec.evaluations,
  best: JSON.parse(rec.run.summary).best_commit,
});

describe("the prompt optimizers as methods (hone optimize, offline executor and proposer)", () => {
  it("opro: scored versions in each meta-prompt, every version kept; resumes after kill -9 to the same end; replays", {
    timeout: 400_000,
  }, async () => {
    const dir = tempDir();
    const reference = join(dir, "ref");
    const args = small("opro", 2);
    // The reference run records its model calls in a cache of its own, which replay reads.
    const r = await hone([...small("opro", 2, [], ["--cache-dir", join(dir, "cache")]), "--out", reference]);
    expect(r.code, r.stderr).toBe(0);
    const rec = records(reference);
    expectMeasuredAndDecided(rec, "opro", /^opro_scored$/);
    // Round 2's meta-prompt showed every version scored by then (the seed and round 1's), worst first.
    const round1 = rec.candidates.filter((c) => c.round <= 1 && c.score !== null);
    for (const c of rec.candidates.filter((x) => x.round === 2)) {
      const opro = stateOf(rec.methodState, c.id)?.opro as { step: number; shown: string[] };
      expect(opro.step).toBe(2);
      expect([...opro.shown].sort()).toEqual(round1.map((x) => x.id).sort());
      const scores = opro.shown.map((id) => round1.find((x) => x.id === id)?.score as number);
      expect(scores).toEqual([...scores].sort((a, b) => a - b));
    }

    const replay = await hone(["replay", reference, "--out", join(dir, "replayed"), "--json"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true, differences: [] });

    // Killed during round 1's rollouts (its proposals and some measurements recorded, no decision yet), and after
    // round 2's proposals were recorded, before any was measured. (Two points only: the machine is shared.)
    const want = finalState(rec);
    for (const [i, [after, nth]] of (
      [
        [/^ {2}r01-k\d: /, 1],
        [/^ {2}proposals: /, 2],
      ] as const
    ).entries()) {
      const out = join(dir, `kill-${i}`);
      await killAfterLine([...args, "--out", out], after, nth);
      const resumed = await hone(["optimize", "--resume", out, "--json"]);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(finalState(records(out))).toEqual(want);
    }
  });

  it("evoprompt-ga: round 1 fills the population with variations of the seed, round 2 breeds a generation", {
    timeout: 180_000,
  }, async () => {
    const out = join(tempDir(), "ga");
    const r = await hone([...small("evoprompt-ga", 2, ["--param", "popsize=3"]), "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const rec = records(out);
    expectMeasuredAndDecided(rec, "evoprompt-ga", /^(evoprompt_init|top_n_survive)$/);
    const init = rec.candidates.filter((c) => c.round === 1).map((c) => c.id);
    for (const id of init) expect(stateOf(rec.methodState, id)).toEqual({ evo: "init" });
    const kids = rec.candidates.filter((c) => c.round === 2 && c.status === "valid");
    expect(kids.length).toBeGreaterThan(0);
    for (const c of kids) {
      const s = stateOf(rec.methodState, c.id) as { evo: string; generation: number; population: string[]; parents: string[] };
      expect([s.evo, s.generation]).toEqual(["ga", 1]);
      expect(s.population).toEqual(["r00-seed", ...init]);
      for (const p of s.parents) expect(s.population).toContain(p);
    }
    // top-N survival: of the population and its children, exactly popsize (3) are kept at the generation's end.
    const scored = [...rec.candidates.filter((c) => c.round <= 1), ...kids].map((c) => c.score as number);
    const cut = [...scored].sort((a, b) => b - a)[2] as number;
    for (const c of kids)
      expect(rec.methodState.find((m) => m.candidate_id === c.id)?.kept).toBe((c.score as number) >= cut ? 1 : 0);
  });

  it("evoprompt-de: round 1 fills the population of four, round 2 writes a child per member, kept only if better", {
    timeout: 180_000,
  }, async () => {
    const out = join(tempDir(), "de");
    const r = await hone([...small("evoprompt-de", 3), "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    const rec = records(out);
    expectMeasuredAndDecided(rec, "evoprompt-de", /^(evoprompt_init|replace_if_better)$/);
    const population = ["r00-seed", ...rec.candidates.filter((c) => c.round === 1).map((c) => c.id)];
    expect(population).toHaveLength(4);
    const kids = rec.candidates.filter((c) => c.round === 2 && c.status === "valid");
    expect(kids.length).toBeGreaterThan(0);
    const score = (id: string) => rec.candidates.find((c) => c.id === id)?.score as number;
    const best = population.reduce((b, id) => (score(id) > score(b) ? id : b));
    for (const c of kids) {
      const s = stateOf(rec.methodState, c.id) as {
        evo: string;
        generation: number;
        slot: number;
        target: string;
        donors: Record<string, string>;
      };
      expect([s.evo, s.generation, s.target]).toEqual(["de", 1, population[s.slot]]);
      expect(s.donors.c).toBe(best);
      expect([s.donors.a, s.donors.b]).not.toContain(s.target);
      const kept = rec.methodState.find((m) => m.candidate_id === c.id)?.kept;
      expect(kept, c.id).toBe((c.score as number) > score(s.target) ? 1 : 0);
    }
  });
});
