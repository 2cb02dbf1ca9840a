// One round of the ratchet over a real hone.db and harness repository: a seed measured deterministic (its program
// scored the same twice) as the incumbent, one candidate k0 whose rollout is written by `rollout`, and a run context
// whose evaluations are counted. `fresh()` starts over (call it before each test).
import { join } from "node:path";
import type { RunContext } from "../../src/loop/optimize-context.ts";
import type { RunNoise } from "../../src/loop/optimize-noise.ts";
import { insertCandidate } from "../../src/store/candidates.ts";
import { type Db, openDb } from "../../src/store/db.ts";
import { HarnessRepo } from "../../src/store/git.ts";
import { saveNoise } from "../../src/store/noise.ts";
import { insertRollout } from "../../src/store/rollouts.ts";
import type { Evaluation } from "../../src/task/evaluation.ts";
import { MemoryEvaluations, recordingEvaluator } from "../../src/task/recorded-evaluations.ts";
import { tempDir, write } from "./fixtures.ts";

export let db: Db;
let repo: HarnessRepo;
export let dir: string;
export let incCommit: string;
let k0Commit: string;

/** An evaluation the evaluator's time limit cut (it says how loaded the machine was, not what the program scores). */
export const timedOut = (): Evaluation => ({
  valid: false,
  reason: "the evaluation timed out after 360 s",
  metrics: {},
  artifacts: {},
  seconds: 360,
  timedOut: true,
});

export const ok = (score: number): Evaluation => ({
  valid: true,
  score,
  metrics: { combined_score: score },
  artifacts: {},
  seconds: 0,
});

async function commit(id: string, slot: number, parent?: string): Promise<string> {
  const d = join(dir, "candidates", id);
  write(join(d, "agent.yaml"), `name: ${id}\n`);
  const sha = await repo.commitDir(d, id, parent, slot);
  insertCandidate(db, "run", {
    id,
    round: id === "seed" ? 0 : 1,
    slot,
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

/** Candidate `id`'s rollout of round 1 (k0 unless named), whose best program `best` scored `own`. */
export function rollout(best: string, own: number, id = "k0") {
  insertRollout(
    db,
    "run",
    {
      id,
      round: 1,
      candidateId: id,
      kind: "candidate",
      seed: 1,
      status: "completed",
      stopReason: "budget",
      error: null,
      startScore: 0,
      bestScore: own,
      improved: true,
      evalsUsed: 1,
      evalsInvalid: 0,
      promptTokens: 0,
      completionTokens: 0,
      modelCalls: 0,
      seconds: 0,
      dir: `rollouts/${id}`,
      bestProgram: best,
      identity: null,
      identityDigest: null,
    },
    [{ index: 1, valid: true, score: own, reason: null, programSha: "x", seconds: 0 }],
    [],
  );
}

/** A run whose seed program gave `incScore` twice (measured deterministic, sd 0), evaluated by `evaluate`. */
export function context(evaluate: (program: string) => Promise<Evaluation>) {
  const noise: RunNoise = { stochastic: false, basis: "measured", n: 2, invalid: 0, mean: 0, sd: 0, spread: 0, repeats: 3 };
  saveNoise(db, "run", {
    program_sha: "seed-sha",
    repeats: 3,
    stochastic: 0,
    basis: "measured",
    n: 2,
    invalid: 0,
    mean: 0,
    sd: 0,
    spread: 0,
  });
  let calls = 0;
  const counted = async (p: string) => {
    calls++;
    return evaluate(p);
  };
  const ctx = {
    db,
    runId: "run",
    dir,
    repo,
    task: { direction: "maximize" },
    settings: { paired: false, noiseRepeats: 3 },
    noise,
    evaluate: recordingEvaluator(counted, "task", new MemoryEvaluations()),
    contentHashOf: () => "hash-seed",
    commitOf: () => null,
    candidateDir: (id: string) => join(dir, "candidates", id),
  } as unknown as RunContext;
  return { ctx, calls: () => calls };
}

export const incumbent = (score: number) => ({
  commit: incCommit,
  dir: join(dir, "candidates", "seed"),
  program: "INC",
  score,
  evaluation: ok(score),
});

export async function fresh() {
  dir = tempDir();
  db = openDb(join(dir, "hone.db"));
  repo = HarnessRepo.init(join(dir, "harnesses.git"));
  incCommit = await commit("seed", 0);
  repo.fastForwardMain(incCommit);
  k0Commit = await commit("k0", 1, incCommit);
  db.prepare(
    "INSERT INTO rounds (run_id, round, status, incumbent_commit, started_at) VALUES ('run', 1, 'rolling_out', ?, 'now')",
  ).run(incCommit);
}

export const k0 = () => ({ candidate: "k0", commit: k0Commit, dir: join(dir, "candidates", "k0") });
