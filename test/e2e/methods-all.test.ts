import { chmodSync, cpSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { RunRegistry } from "../../src/console/runs.ts";
import { consoleApp } from "../../src/console/server.ts";
import { hone, killAfterLine, optimizeArgs } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";

// Every method `hone methods --json` lists (a method added later is covered without editing this file), on circle
// packing with the offline executor and proposer, 2 rounds of 2 proposals and 3 evaluator calls per rollout: a run
// killed with kill -9 once round 1 is done and resumed; its replay (the same run uninterrupted, the model answered
// from the record) matching it exactly and ending with the same records; and the run as the console's API shows it.
// Three hone processes per method, at most two at once (a separate uninterrupted run would add a fourth).

const listed = await hone(["methods", "--json"]);
const methods = (JSON.parse(listed.stdout) as { name: string }[]).map((m) => m.name);

const root = tempDir("hone-methods-all-");
const agentDir = join(root, "agent");
cpSync(join(ROOT, "test", "fixtures", "meta-harness-agent"), agentDir, { recursive: true });
chmodSync(join(agentDir, "agent.py"), 0o755);
/** Methods that need more than the defaults offline: meta-harness runs its scripted coding-agent stand-in. */
const EXTRA: Record<string, string[]> = { "meta-harness": ["--param", `command=${join(agentDir, "agent.py")}`] };

const args = (method: string, out: string, cache: string[]) =>
  optimizeArgs({
    rounds: 2,
    proposals: 2,
    maxEvals: 3,
    seed: 3,
    out,
    cache,
    json: false,
    extra: ["--executor", "offline", "--proposer", "offline", "--method", method, ...(EXTRA[method] ?? [])],
  });

/** At most two runs at once: the machine is shared. */
let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(work: () => Promise<T>): Promise<T> {
  while (running >= 2) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** Every record a resumed run and its uninterrupted replay must share (timings and folders left out). */
function records(dir: string) {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const all = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
  const out = {
    candidates: all(
      "SELECT id, round, slot, parent_commit, commit_sha, content_hash, spec, changed, status, gate_error, repaired, reward, advantage, score FROM candidates ORDER BY id",
    ),
    methodState: all(
      "SELECT candidate_id, method, parents, rationale, kept, rule, reason, state FROM method_state ORDER BY candidate_id",
    ),
    decisions: all("SELECT round, candidate_id, decision, rule, reason, score FROM decisions ORDER BY round, candidate_id"),
    rounds: all("SELECT round, status, incumbent_commit, incumbent_score, best_score, moved FROM rounds ORDER BY round"),
    rollouts: all("SELECT id, candidate_id, kind, status, best_score, evals_used FROM rollouts ORDER BY id"),
    run: db.prepare("SELECT status, summary FROM runs").get() as { status: string; summary: string },
  };
  db.close();
  const summary = JSON.parse(out.run.summary) as { best_commit: string; best_score: number };
  return { ...out, run: { status: out.run.status, best_commit: summary.best_commit, best_score: summary.best_score } };
}

const registry = new RunRegistry(root, 0);
afterAll(() => registry.close());

async function consoleGet(path: string) {
  const r = await consoleApp(registry, { root }).request(path, { headers: { host: "127.0.0.1:4460" } });
  expect(r.status, path).toBe(200);
  return (await r.json()) as Record<string, unknown>;
}

describe.concurrent("every listed method: optimize, kill -9 and --resume, replay, console (offline model)", () => {
  it("lists the twelve methods at least", () => {
    expect(listed.code, listed.stderr).toBe(0);
    for (const m of ["harnessttt", "greedy", "random", "opro", "evoprompt-ga", "evoprompt-de", "gepa", "ace"])
      expect(methods).toContain(m);
    for (const m of ["skillopt", "dgm", "adas", "meta-harness"]) expect(methods).toContain(m);
    // No parameter's default is left unexplained: one the schema cannot give is shown as its rule, in words.
    const rows = JSON.parse(listed.stdout) as { name: string; params: Record<string, unknown>; derived_defaults: object }[];
    for (const m of rows) for (const [k, v] of Object.entries(m.params)) expect(v, `${m.name} ${k}`).not.toBeNull();
    expect(rows.find((m) => m.name === "harnessttt")?.derived_defaults).toEqual({
      proposal_gate: {
        rule: "min⌈6K/8⌉",
        words: expect.stringMatching(/⌈6K\/8⌉ valid proposals/),
        by_k: { 1: "min1", 2: "min2", 4: "min3", 8: "min6" },
      },
    });
  });

  for (const method of methods)
    it(method, { timeout: 300_000 }, async () => {
      // Killed with kill -9 once round 1 is decided, then resumed from a fresh process, its model calls recorded.
      const run = join(root, method, "run");
      const cache = ["--cache-dir", join(root, method, "cache")];
      await slot(() => killAfterLine(args(method, run, cache), /^round 1 done/));
      const resumed = await slot(() => hone(["optimize", "--resume", run, "--json"]));
      expect(resumed.code, resumed.stderr).toBe(0);
      const got = records(run);
      expect(got.run.status).toBe("finished");
      expect(got.candidates.filter((c) => c.round === 2).length, "round 2 proposed nothing").toBeGreaterThan(0);

      // The replay is the same run uninterrupted, its model answered from the record (a request the resumed run did
      // not make is refused). It must match field by field, and end with the same choice, score and records.
      const replayed = join(root, method, "replayed");
      const replay = await slot(() => hone(["replay", run, "--out", replayed, "--json"]));
      expect(replay.code, replay.stderr).toBe(0);
      expect(JSON.parse(replay.stdout)).toMatchObject({ matches: true, differences: [] });
      expect(records(replayed)).toEqual(got);

      // The console's run page names the method; its candidates carry the method's keep decisions.
      const id = encodeURIComponent(`${method}/run`);
      const page = await consoleGet(`/api/runs/${id}`);
      expect(page).toMatchObject({ status: "finished", rounds_done: 2 });
      expect(String(page.method).split(" · ").slice(0, 2)).toEqual(["optimize", method]);
      const list = await consoleGet(`/api/runs/${id}/candidates?limit=100`);
      const shown = (list.items as { id: string; method_decision: unknown }[]).map((c) => [c.id, c.method_decision] as const);
      const kept = (k: unknown) => (k === null ? null : k === 1);
      expect(new Map(shown)).toEqual(
        new Map(got.methodState.map((m) => [m.candidate_id, { kept: kept(m.kept), rule: m.rule, reason: m.reason }])),
      );
    });
});
