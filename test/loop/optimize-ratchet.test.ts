import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { RunContext } from "../../src/loop/optimize-context.ts";
import type { RunNoise } from "../../src/loop/optimize-noise.ts";
import { closeRound, incumbentAfter, ratchet } from "../../src/loop/optimize-ratchet.ts";
import { identityDigest } from "../../src/measure/identity.ts";
import { rng } from "../../src/rng.ts";
import { insertCandidate } from "../../src/store/candidates.ts";
import { type Db, openDb } from "../../src/store/db.ts";
import { HarnessRepo } from "../../src/store/git.ts";
import { insertRollout } from "../../src/store/rollouts.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { MemoryEvaluations, recordingEvaluator } from "../../src/task/recorded-evaluations.ts";
import { tempDir, write } from "../helpers/fixtures.ts";

// The ratchet against a real hone.db and git repository, with an evaluator whose noise is known: each program has a
// true mean, and every evaluation adds Gaussian noise of a known sd from a seeded generator.
const TRUE_MEAN: Record<string, number> = { INC: 0.7, BETTER: 0.8, MARGINAL: 0.705, WORSE: 0.6, TWIN: 0.7 };

function noisyEvaluator(sd: number, seed = 7) {
  const random = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  let calls = 0;
  const evaluate = async (program: string): Promise<Evaluation> => {
    calls++;
    const score = (TRUE_MEAN[program] ?? 0) + sd * gauss();
    return { valid: true, score, metrics: { combined_score: score }, artifacts: {}, seconds: 0.01 };
  };
  return { evaluate, calls: () => calls };
}

const base = {
  task: { id: "t", content: "c", metric: "combined_score", direction: "maximize" },
  executor: { endpoint: "offline", model: "offline", dialect: "vllm" },
  budget: { maxEvals: 4, timeoutSec: 10 },
  hone: "test",
};

let db: Db;
let repo: HarnessRepo;
let dir: string;
let incCommit: string;
const commits: Record<string, string> = {};
const hashes: Record<string, string> = {};

async function commit(id: string, text: string, parent?: string): Promise<string> {
  const d = join(dir, "candidates", id);
  write(join(d, "agent.yaml"), `name: ${id}\n# ${text}\n`);
  const sha = await repo.commitDir(d, id, parent, Object.keys(commits).length);
  commits[id] = sha;
  hashes[sha] = `hash-${id}`;
  insertCandidate(db, "run", {
    id,
    round: id === "seed" ? 0 : 1,
    slot: Object.keys(commits).length,
    parentCommit: parent ?? sha,
    commit: sha,
    ref: null,
    contentHash: `hash-${id}`,
    spec: null,
    changed: [],
    status: "valid",
    gateError: null,
    repaired: false,
  });
  return sha;
}

function rollout(
  id: string,
  candidate: string,
  o: { kind?: "candidate" | "parent"; best: string; own: number[]; seed?: number; harness?: string; status?: string },
) {
  const identity = { ...base, sampling: { seed: o.seed ?? 1 }, harness: o.harness ?? `hash-${candidate}` };
  insertRollout(
    db,
    "run",
    {
      id,
      round: 1,
      candidateId: candidate,
      kind: o.kind ?? "candidate",
      seed: o.seed ?? 1,
      status: o.status ?? "completed",
      stopReason: "budget",
      error: o.status === "failed" ? "the worker died" : null,
      startScore: 0.7,
      bestScore: Math.max(0.7, ...o.own),
      improved: true,
      evalsUsed: o.own.length,
      evalsInvalid: 0,
      promptTokens: 0,
      completionTokens: 0,
      modelCalls: 0,
      seconds: 0,
      dir: `rollouts/${id}`,
      bestProgram: o.best,
      identity: JSON.stringify(identity),
      identityDigest: identityDigest(identity),
    },
    o.own.map((score, i) => ({ index: i + 1, valid: true, score, reason: null, programSha: "x", seconds: 0 })),
    [],
  );
}

function context(o: { sd: number; stochastic: boolean; paired?: boolean; repeats?: number; basis?: RunNoise["basis"] }) {
  const ev = noisyEvaluator(o.sd);
  const noise: RunNoise = {
    stochastic: o.stochastic,
    basis: o.basis ?? "measured",
    n: 3,
    invalid: 0,
    mean: 0.7,
    sd: o.sd,
    spread: 2 * o.sd,
    repeats: o.repeats ?? 3,
  };
  const ctx = {
    db,
    runId: "run",
    dir,
    repo,
    task: { direction: "maximize" },
    settings: { paired: o.paired ?? false, noiseRepeats: o.repeats ?? 3 },
    noise,
    evaluate: recordingEvaluator(ev.evaluate, "task", new MemoryEvaluations()),
    contentHashOf: (c: string) => hashes[c] ?? null,
    commitOf: (id: string) => commits[id] ?? null,
    candidateDir: (id: string) => join(dir, "candidates", id),
  } as unknown as RunContext;
  return { ctx, calls: ev.calls };
}

const incumbent = () => ({
  commit: incCommit,
  dir: join(dir, "candidates", "seed"),
  program: "INC",
  score: 0.7,
  evaluation: { valid: true, score: 0.7, metrics: {}, artifacts: {}, seconds: 0 },
});
const contender = (id: string) => ({ candidate: id, commit: commits[id] as string, dir: join(dir, "candidates", id) });

beforeEach(async () => {
  dir = tempDir();
  db = openDb(join(dir, "hone.db"));
  repo = HarnessRepo.init(join(dir, "harnesses.git"));
  for (const k of Object.keys(commits)) delete commits[k];
  incCommit = await commit("seed", "seed");
  repo.fastForwardMain(incCommit);
  db.prepare(
    "INSERT INTO rounds (run_id, round, status, incumbent_commit, started_at) VALUES ('run', 1, 'rolling_out', ?, 'now')",
  ).run(incCommit);
});

describe("the ratchet: different program and a margin above the noise", () => {
  it("stochastic: promotes a program whose mean clears the noise; refuses the same program, a lucky draw and a failed rollout", async () => {
    for (const id of ["k0", "k1", "k2", "k3"]) await commit(id, id, incCommit);
    rollout("k0", "k0", { best: "BETTER", own: [0.79] });
    rollout("k1", "k1", { best: "INC", own: [0.9] }); // a lucky evaluation of the unchanged program
    rollout("k2", "k2", { best: "MARGINAL", own: [0.75] }); // a lucky evaluation of a program no better than the incumbent
    rollout("k3", "k3", { best: "BETTER", own: [0.8], status: "failed" });
    const { ctx } = context({ sd: 0.01, stochastic: true });
    const r = await ratchet(ctx, 1, incumbent(), ["k0", "k1", "k2", "k3"].map(contender));
    const by = Object.fromEntries(r.decisions.map((d) => [d.candidate_id, d]));
    expect(by.k0).toMatchObject({ decision: "promote", rule: "welch_interval" });
    expect((by.k0?.detail?.interval as number[] | undefined)?.[0]).toBeGreaterThan(0);
    expect(by.k1).toMatchObject({ decision: "reject", rule: "same_program" });
    expect(by.k2).toMatchObject({ decision: "reject", rule: "welch_interval" });
    expect(by.k3).toMatchObject({ decision: "unmeasurable", rule: "rollout_failed" });
    expect(r.next.commit).toBe(commits.k0);
    expect(r.next.score).toBeCloseTo(0.8, 1); // the mean of its repeats, not its luckiest evaluation
    expect(repo.resolve("refs/heads/main")).toBe(commits.k0);
    // Every re-evaluation is recorded apart from the rollouts: the incumbent and each eligible candidate, 3 times.
    const counts = db.prepare("SELECT purpose, COUNT(*) AS n FROM noise_evaluations GROUP BY purpose ORDER BY purpose").all();
    expect(counts).toEqual([
      { purpose: "candidate", n: 6 },
      { purpose: "incumbent", n: 3 },
    ]);
    closeRound(ctx, 1, r);
    expect(incumbentAfter(ctx, 1, incumbent())).toMatchObject({ commit: commits.k0, program: "BETTER", score: r.next.score });
  });

  it("deciding a round again after a kill reuses its recorded repeats and reaches the same decisions", async () => {
    for (const id of ["k0", "k2"]) await commit(id, id, incCommit);
    rollout("k0", "k0", { best: "BETTER", own: [0.79] });
    rollout("k2", "k2", { best: "MARGINAL", own: [0.75] });
    const first = await ratchet(context({ sd: 0.01, stochastic: true }).ctx, 1, incumbent(), ["k0", "k2"].map(contender));
    const again = context({ sd: 0.01, stochastic: true });
    const second = await ratchet(again.ctx, 1, incumbent(), ["k0", "k2"].map(contender));
    expect(second.decisions).toEqual(first.decisions);
    expect(again.calls()).toBe(0);
  });

  it("deterministic: strictly better wins; a tie and the same program never do; nothing is re-evaluated", async () => {
    for (const id of ["k0", "k1", "k2"]) await commit(id, id, incCommit);
    rollout("k0", "k0", { best: "WORSE", own: [0.7] });
    rollout("k1", "k1", { best: "INC", own: [0.75] });
    rollout("k2", "k2", { best: "BETTER", own: [0.71] });
    const { ctx, calls } = context({ sd: 0, stochastic: false, basis: "declared" });
    const r = await ratchet(ctx, 1, incumbent(), ["k0", "k1", "k2"].map(contender));
    const by = Object.fromEntries(r.decisions.map((d) => [d.candidate_id, d]));
    expect(by.k0).toMatchObject({ decision: "reject", rule: "strictly_better" });
    expect(by.k1).toMatchObject({ decision: "reject", rule: "same_program" });
    expect(by.k2).toMatchObject({ decision: "promote", rule: "strictly_better", score: 0.71 });
    expect(calls()).toBe(0);
  });

  it("never moves the incumbent on noise alone, over many noisy rounds", async () => {
    await commit("k0", "k0", incCommit);
    let moved = 0;
    for (let seed = 0; seed < 40; seed++) {
      db.prepare("DELETE FROM rollouts").run();
      db.prepare("DELETE FROM noise_evaluations").run();
      // A different program with the incumbent's true mean, whose rollout got a lucky evaluation.
      rollout("k0", "k0", { best: "TWIN", own: [0.74] });
      const ev = noisyEvaluator(0.02, seed);
      const { ctx } = context({ sd: 0.02, stochastic: true });
      (ctx as { evaluate: unknown }).evaluate = recordingEvaluator(ev.evaluate, "task", new MemoryEvaluations());
      const r = await ratchet(ctx, 1, incumbent(), [contender("k0")]);
      if (r.decisions[0]?.decision === "promote") moved++;
    }
    // A 95% interval that must exclude zero: a twin is promoted about 2.5% of the time at most, never routinely.
    expect(moved).toBeLessThanOrEqual(3);
  });
});

describe("a round of many candidates promotes noise no more often than one comparison would", () => {
  it("each candidate clears the incumbent at the Bonferroni level over the round's comparisons", async () => {
    // Eight programs as good as the incumbent (scripted repeats, no randomness), one of which drew three high repeats:
    // alone, its 95% Welch interval [0.0073, 0.053] excludes zero; as the best of eight it is what luck gives.
    const ids = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"];
    for (const id of ids) await commit(id, id, incCommit);
    const scripted: Record<string, number[]> = { INC: [0.7, 0.71, 0.69], LUCKY: [0.73, 0.74, 0.72] };
    for (const [i, id] of ids.entries()) {
      const program = i === 7 ? "LUCKY" : `TWIN${i}`;
      scripted[program] ??= [0.7, 0.705, 0.695];
      rollout(id, id, { best: program, own: [0.75] });
    }
    const used: Record<string, number> = {};
    const evaluate = async (program: string): Promise<Evaluation> => {
      used[program] = (used[program] ?? -1) + 1;
      const score = scripted[program]?.[used[program]] ?? 0;
      return { valid: true, score, metrics: { combined_score: score }, artifacts: {}, seconds: 0 };
    };
    const { ctx } = context({ sd: 0.01, stochastic: true });
    (ctx as { evaluate: unknown }).evaluate = recordingEvaluator(evaluate, "task", new MemoryEvaluations());
    const r = await ratchet(ctx, 1, incumbent(), ids.map(contender));
    const lucky = r.decisions.find((d) => d.candidate_id === "k7");
    expect((lucky?.detail?.interval as number[] | undefined)?.[0]).toBeGreaterThan(0); // the single comparison's 95% interval
    expect(lucky).toMatchObject({ decision: "reject", rule: "welch_interval" });
    expect(lucky?.reason).toMatch(/99\.375% interval \(Bonferroni over 8 candidates\) \[-0\.\d+, /);
    expect(lucky?.detail?.family).toMatchObject({ comparisons: 8, confidence: 0.99375 });
    expect(r.decisions.every((d) => d.decision !== "promote")).toBe(true);
    expect(r.next.commit).toBe(incCommit);
  });

  it("a real gain still clears the corrected interval", async () => {
    const ids = ["k0", "k1", "k2", "k3"];
    for (const id of ids) await commit(id, id, incCommit);
    for (const [i, id] of ids.entries()) rollout(id, id, { best: i === 0 ? "BETTER" : "TWIN", own: [0.75] });
    const { ctx } = context({ sd: 0.01, stochastic: true });
    const r = await ratchet(ctx, 1, incumbent(), ids.map(contender));
    expect(r.decisions.find((d) => d.candidate_id === "k0")).toMatchObject({ decision: "promote", rule: "welch_interval" });
  });
});

describe("--paired controls fail closed", () => {
  beforeEach(async () => {
    for (const id of ["k0", "k1", "k2", "k3", "k4"]) await commit(id, id, incCommit);
  });

  it("a missing, failed or mismatched control makes the candidate unmeasurable; it must beat its own control", async () => {
    const better = { best: "BETTER", own: [0.8], seed: 11 };
    rollout("k0", "k0", better); // no control at all
    rollout("k1", "k1", better);
    rollout("k1-parent", "k1", { kind: "parent", best: "INC", own: [0.69], seed: 11, harness: "hash-seed", status: "failed" });
    rollout("k2", "k2", better);
    rollout("k2-parent", "k2", { kind: "parent", best: "INC", own: [0.69], seed: 12, harness: "hash-seed" }); // another seed
    rollout("k3", "k3", better);
    rollout("k3-parent", "k3", { kind: "parent", best: "INC", own: [0.69], seed: 11, harness: "hash-k1" }); // not the parent
    rollout("k4", "k4", { best: "MARGINAL", own: [0.76], seed: 11 });
    rollout("k4-parent", "k4", { kind: "parent", best: "BETTER", own: [0.81], seed: 11, harness: "hash-seed" });
    const { ctx } = context({ sd: 0, stochastic: false, paired: true, basis: "declared" });
    const r = await ratchet(ctx, 1, incumbent(), ["k0", "k1", "k2", "k3", "k4"].map(contender));
    const by = Object.fromEntries(r.decisions.map((d) => [d.candidate_id, d]));
    expect(by.k0).toMatchObject({ decision: "unmeasurable", rule: "control_missing" });
    expect(by.k1).toMatchObject({ decision: "unmeasurable", rule: "control_failed" });
    expect(by.k2).toMatchObject({ decision: "unmeasurable", rule: "control_mismatch" });
    expect(by.k2?.reason).toMatch(/seed: 12 ≠ 11/);
    expect(by.k3).toMatchObject({ decision: "unmeasurable", rule: "control_mismatch" });
    expect(by.k3?.reason).toMatch(/not the parent/);
    expect(by.k4).toMatchObject({ decision: "reject", rule: "beats_control" });
    expect(r.next.commit).toBe(incCommit);
  });

  it("stochastic and paired: the candidate's repeats must clear both the incumbent's and its control's", async () => {
    rollout("k0", "k0", { best: "BETTER", own: [0.8], seed: 11 });
    rollout("k0-parent", "k0", { kind: "parent", best: "INC", own: [0.71], seed: 11, harness: "hash-seed" });
    rollout("k1", "k1", { best: "MARGINAL", own: [0.78], seed: 11 });
    rollout("k1-parent", "k1", { kind: "parent", best: "BETTER", own: [0.8], seed: 11, harness: "hash-seed" });
    const { ctx } = context({ sd: 0.01, stochastic: true, paired: true });
    const r = await ratchet(ctx, 1, incumbent(), ["k0", "k1"].map(contender));
    const by = Object.fromEntries(r.decisions.map((d) => [d.candidate_id, d]));
    expect(by.k0).toMatchObject({ decision: "promote", rule: "welch_interval" });
    expect(by.k0?.detail?.control).toMatchObject({ rule: "welch_interval" });
    expect(by.k1?.decision).toBe("reject");
  });
});
