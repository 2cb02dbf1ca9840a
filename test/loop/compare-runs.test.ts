import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compareRecords } from "../../src/loop/compare-runs.ts";
import { createRunDb, openDb } from "../../src/store/db.ts";
import { insertMethodProposal, setMethodKeep } from "../../src/store/method-state.ts";
import { tempDir } from "../helpers/fixtures.ts";

function run(state: Record<string, unknown>, kept: boolean) {
  const path = join(tempDir(), "hone.db");
  createRunDb(path, "optimize", {});
  const db = openDb(path);
  insertMethodProposal(db, "run", { candidate_id: "r01-k0", method: "dgm", parents: ["r00-seed"], rationale: "x", state });
  setMethodKeep(db, "run", "r01-k0", "dgm", { keep: kept, rule: "keep_all", reason: "archived" });
  return db;
}

describe("a replay's comparison of records", () => {
  it("covers the method's own records: its state and its keep decisions", () => {
    const a = run({ dgm: { children: 0 } }, true);
    expect(compareRecords(a, run({ dgm: { children: 0 } }, true)).differences).toEqual([]);
    const other = compareRecords(a, run({ dgm: { children: 1 } }, false));
    expect(other.counts.method_state).toBe(1);
    expect(other.differences).toEqual([
      "method_state[0].kept: 1 ≠ 0",
      'method_state[0].state: "{\\"dgm\\":{\\"children\\":0}}" ≠ "{\\"dgm\\":{\\"children\\":1}}"',
    ]);
  });
});
