import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRunDb, openDb } from "../../src/store/db.ts";
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
