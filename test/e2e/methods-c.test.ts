import { chmodSync, cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone, killAfterLine, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// dgm, adas and meta-harness through `hone optimize --method` on circle packing with the offline model: proposals
// made and measured, decisions recorded, the method's kept/state in method_state; dgm resumes after kill -9 to the
// same final state and replays with the same records.
const OFFLINE = ["--executor", "offline", "--proposer", "offline"];
const args = (method: string, out: string, extra: string[] = [], json = true) =>
  optimizeArgs({ rounds: 2, proposals: 2, maxEvals: 3, seed: 3, out, json, extra: [...OFFLINE, "--method", method, ...extra] });

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
  const all = <T>(sql: string) => db.prepare(sql).all() as T[];
  const out = {
    candidates: all<{ id: string; round: number; status: string; commit_sha: string | null; score: number | null }>(
      "SELECT id, round, status, commit_sha, score FROM candidates ORDER BY id",
    ),
    rollouts: all<{ candidate_id: string; status: string; evals_used: number }>(
      "SELECT candidate_id, status, evals_used FROM rollouts ORDER BY id",
    ),
    decisions: all<{ candidate_id: string; decision: string; rule: string }>(
      "SELECT round, candidate_id, decision, rule, reason FROM decisions ORDER BY round, candidate_id",
    ),
    methodState: all<MethodRow>(
      "SELECT candidate_id, method, parents, kept, rule, reason, state FROM method_state ORDER BY candidate_id",
    ),
    rounds: all<{ round: number }>("SELECT round, incumbent_commit, incumbent_score, moved FROM rounds ORDER BY round"),
  };
  db.close();
  return out;
}

/** What every method's run must show: 2 rounds of proposals, measured, decided, and its own state recorded. */
function expectMethodRun(dir: string, method: string, stateKey: string) {
  const r = records(dir);
  const proposed = r.candidates.filter((c) => c.round > 0);
  expect(proposed.map((c) => c.id)).toEqual(["r01-k0", "r01-k1", "r02-k0", "r02-k1"]);
  const valid = proposed.filter((c) => c.status === "valid");
  expect(valid.length).toBeGreaterThan(0);
  const measured = new Set(r.rollouts.filter((x) => x.status === "completed" && x.evals_used > 0).map((x) => x.candidate_id));
  for (const c of valid) expect(measured.has(c.id), c.id).toBe(true);
  expect(r.decisions.map((d) => d.candidate_id)).toEqual(expect.arrayContaining(valid.map((c) => c.id)));
  const rows = new Map(r.methodState.map((m) => [m.candidate_id, m]));
  for (const c of proposed) {
    const m = rows.get(c.id) as MethodRow;
    expect(m?.method, c.id).toBe(method);
    expect(JSON.parse(m.parents).length).toBeGreaterThan(0);
    expect(Object.keys(JSON.parse(m.state ?? "{}"))).toEqual([stateKey]);
    if (c.status === "valid") expect([0, 1], c.id).toContain(m.kept);
    if (c.status === "valid") expect(m.rule, c.id).toBeTruthy();
  }
  return r;
}

const final = (r: ReturnType<typeof records>) => ({
  candidates: r.candidates,
  decisions: r.decisions,
  methodState: r.methodState,
  rounds: r.rounds,
});

describe("dgm, adas and meta-harness (CLI, offline model)", () => {
  it("dgm: two rounds of self-rewrites from the archive; kill -9 and --resume end the same; replay matches", {
    timeout: 400_000,
  }, async () => {
    const base = tempDir();
    const ref = join(base, "ref");
    const r = await hone(args("dgm", ref), { timeoutMs: 300_000 });
    expect(r.code, r.stderr).toBe(0);
    const want = expectMethodRun(ref, "dgm", "dgm");
    const dgmState = JSON.parse(want.methodState.find((m) => m.candidate_id === "r02-k0")?.state ?? "{}").dgm;
    expect(dgmState).toMatchObject({ generation: 2, selection: "score_child_prop", scale: "relative" });
    expect(dgmState.archive[0]).toBe("r00-seed");
    // Killed once round 2's proposals are recorded: the resumed run rolls them out concurrently from a fresh process
    // and ends as the uninterrupted one (optimize.test.ts covers the other kill points of the same loop).
    const out = join(base, "killed");
    await killAfterLine(args("dgm", out, [], false), /^ {2}proposals: /, 2);
    expect(existsSync(join(out, "hone.db"))).toBe(true);
    const resumed = await hone(["optimize", "--resume", out, "--json"], { timeoutMs: 300_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(final(records(out))).toEqual(final(want));
    const replay = await hone(["replay", ref, "--out", join(base, "replayed"), "--json"]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true, differences: [] });
    expect(records(join(base, "replayed")).methodState).toEqual(want.methodState);
  });

  it("adas: generations proposed and reflected by the meta agent, measured and archived", { timeout: 200_000 }, async () => {
    const out = join(tempDir(), "adas");
    const r = await hone(args("adas", out));
    expect(r.code, r.stderr).toBe(0);
    const rec = expectMethodRun(out, "adas", "adas");
    const states = rec.methodState.filter((m) => m.candidate_id !== "r00-seed").map((m) => JSON.parse(m.state ?? "{}").adas);
    expect(states.every((s) => s.generation >= 1 && s.attempt >= 1 && s.messages.length >= 7)).toBe(true);
    expect(rec.methodState.some((m) => m.rule === "archived")).toBe(true);
  });

  it("meta-harness: hone's meta agent by default, and a coding-agent command (a scripted stand-in)", {
    timeout: 300_000,
  }, async () => {
    const base = tempDir();
    const r = await hone(args("meta-harness", join(base, "default")));
    expect(r.code, r.stderr).toBe(0);
    const rec = expectMethodRun(join(base, "default"), "meta-harness", "meta_harness");
    expect(rec.methodState.every((m) => m.candidate_id === "r00-seed" || m.rule === "frontier")).toBe(true);
    expect(JSON.parse(rec.methodState.find((m) => m.candidate_id === "r01-k0")?.state ?? "{}").meta_harness).toMatchObject({
      iteration: 1,
      proposer: "meta-agent",
      base: "r00-seed",
    });

    const agent = join(base, "agent", "agent.py");
    cpSync(join(ROOT, "test", "fixtures", "meta-harness-agent"), join(base, "agent"), { recursive: true });
    chmodSync(agent, 0o755);
    const c = await hone(args("meta-harness", join(base, "command"), ["--param", `command=${agent}`]));
    expect(c.code, c.stderr).toBe(0);
    const cmd = expectMethodRun(join(base, "command"), "meta-harness", "meta_harness");
    const s = JSON.parse(cmd.methodState.find((m) => m.candidate_id === "r02-k1")?.state ?? "{}").meta_harness;
    expect(s).toMatchObject({ iteration: 2, proposer: "command", axis: "exploration", changes: "prompt.md hints" });
    expect(s.hypothesis).toMatch(/^stand-in 1: /);

    const missing = await hone(args("meta-harness", join(base, "missing"), ["--param", "command=hone-no-such-agent -p"]));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/command "hone-no-such-agent -p" cannot run: "hone-no-such-agent" is not installed/);
    expect(existsSync(join(base, "missing", "hone.db"))).toBe(false);
  });
});
