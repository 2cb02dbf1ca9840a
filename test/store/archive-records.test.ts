import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRunDb, openDb } from "../../src/store/db.ts";
import { insertMethodProposal, methodStates, setMethodKeep } from "../../src/store/method-state.ts";
import {
  type EvaluationRecordRow,
  insertRollout,
  invalidReasonsByRollout,
  type RolloutRecord,
} from "../../src/store/rollouts.ts";
import { tempDir } from "../helpers/fixtures.ts";

const rollout = (id: string, round: number): RolloutRecord => ({
  id,
  round,
  candidateId: `c-${id}`,
  kind: "candidate",
  seed: 0,
  status: "completed",
  stopReason: null,
  error: null,
  startScore: null,
  bestScore: null,
  improved: false,
  evalsUsed: 0,
  evalsInvalid: 0,
  promptTokens: 0,
  completionTokens: 0,
  modelCalls: 0,
  seconds: 0,
  dir: id,
  bestProgram: null,
  identity: null,
  identityDigest: null,
});
const evaluation = (index: number, valid: boolean, reason: string | null): EvaluationRecordRow => ({
  index,
  valid,
  score: valid ? 1 : null,
  reason,
  programSha: `sha${index}`,
  seconds: 0,
});

describe("invalid evaluations' reasons, for a method's archive", () => {
  it("gives each rollout of the run its latest invalid reasons, at most `limit`, in one query", () => {
    const path = join(tempDir(), "run", "hone.db");
    createRunDb(path, "optimize", {});
    const db = openDb(path);
    const many = Array.from({ length: 8 }, (_, i) => evaluation(i, i % 4 === 3, i % 4 === 3 ? null : `bad ${i}`));
    insertRollout(db, "run", rollout("a", 1), many, []);
    insertRollout(db, "run", rollout("b", 1), [evaluation(0, false, null), evaluation(1, true, "ignored: valid")], []);
    insertRollout(db, "run", rollout("c", 2), [evaluation(0, false, "only"), evaluation(5, false, "later")], []);
    insertRollout(db, "other-run", rollout("d", 1), [evaluation(0, false, "another run's")], []);
    const reasons = invalidReasonsByRollout(db, "run", 3);
    db.close();
    expect(Object.fromEntries(reasons)).toEqual({ a: ["bad 6", "bad 5", "bad 4"], c: ["later", "only"] });
  });
});

describe("method states, for a method's archive", () => {
  it("reads back each candidate's state as written, parsed once when first read", () => {
    const path = join(tempDir(), "run", "hone.db");
    createRunDb(path, "optimize", {});
    const db = openDb(path);
    const snapshot = { dgm: { generation: 3, archive: ["r00-seed", "r01-k0"], children: { "r00-seed": 1 } } };
    insertMethodProposal(db, "run", {
      candidate_id: "r01-k0",
      method: "dgm",
      parents: ["r00-seed"],
      rationale: "x",
      state: snapshot,
    });
    insertMethodProposal(db, "run", {
      candidate_id: "r01-k1",
      method: "dgm",
      parents: ["r00-seed"],
      rationale: null,
      state: null,
    });
    setMethodKeep(db, "run", "r01-k0", "dgm", { keep: true, rule: "keep_all", reason: "archived" });
    const states = methodStates(db, "run");
    db.close();
    const row = states.get("r01-k0");
    expect(row).toMatchObject({ parents: ["r00-seed"], kept: true, rule: "keep_all", rationale: "x" });
    expect(row?.state).toEqual(snapshot);
    expect(row?.state).toBe(row?.state);
    expect(states.get("r01-k1")?.state).toBeNull();
  });
});
