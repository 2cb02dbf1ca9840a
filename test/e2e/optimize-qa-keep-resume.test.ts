import { cpSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { optimize } from "../../src/loop/optimize.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { qaFinalState } from "../helpers/run-state.ts";

// A method's keep decision and the candidate's score are written together. A kill between the two once left a
// decided candidate without its score, and the resumed run skipped decided candidates, so the score stayed empty
// (seen in CI: evoprompt-ga's r02-k0 ended with score null after kill -9 and --resume). Here the run's last round is
// put back to where it stood before its keep decisions, and the write of one score is made to fail, as a kill there.

const DATA = join(ROOT, "test", "fixtures", "datasets");
let full = "";
let want: ReturnType<typeof qaFinalState>;

beforeAll(async () => {
  full = join(tempDir(), "full");
  const benchmark = { id: "gsm8k", train: 4, validation: 2, dataDir: DATA };
  const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
  await optimize(
    { benchmark, ...models, rounds: 2, proposals: 2, method: "evoprompt-ga", cache: { mode: "off" } },
    { outDir: full },
  );
  want = qaFinalState(full);
}, 60_000);

/** A copy of the finished run with round 2 unfinished and measured, before (or, with `decided`, after) its keeps. */
function beforeKeep(decided: boolean): string {
  const dir = join(tempDir(), "run");
  cpSync(full, dir, { recursive: true });
  const db = new Database(join(dir, "hone.db"));
  db.exec(`DELETE FROM decisions WHERE round = 2;
    UPDATE rounds SET status = 'rolling_out', best_score = NULL, moved = 0, finished_at = NULL WHERE round = 2;
    UPDATE runs SET status = 'running', summary = NULL, finished_at = NULL;
    UPDATE candidates SET score = NULL WHERE round = 2;`);
  if (!decided) db.exec("UPDATE method_state SET kept = NULL, rule = NULL, reason = NULL WHERE candidate_id LIKE 'r02-%'");
  db.close();
  return dir;
}

const kept = (dir: string, id: string) => {
  const db = new Database(join(dir, "hone.db"), { readonly: true });
  const row = db.prepare("SELECT kept FROM method_state WHERE candidate_id = ?").get(id) as { kept: number | null };
  db.close();
  return row.kept;
};

describe("a QA round's keep decisions and scores are written as one", () => {
  it("the round is as the uninterrupted run left it before the simulation (round 2 has a measured candidate)", () => {
    expect(want.rounds).toHaveLength(3);
    expect(want.candidates.filter((c) => (c as { round: number }).round === 2).length).toBeGreaterThan(0);
    expect(want.methodState.find((m) => (m as { candidate_id: string }).candidate_id === "r02-k0")).toMatchObject({ kept: 1 });
  });

  it("a failed score write leaves no keep decision behind, and the resumed run ends as the uninterrupted one", async () => {
    const dir = beforeKeep(false);
    const db = new Database(join(dir, "hone.db"));
    db.exec(`CREATE TRIGGER kill_here BEFORE UPDATE OF score ON candidates WHEN NEW.id = 'r02-k0'
      BEGIN SELECT RAISE(ABORT, 'killed between the keep decision and the score'); END`);
    db.close();
    const killed = await hone(["optimize", "--resume", dir, "--json"]);
    expect(killed.code).not.toBe(0);
    expect(killed.stderr).toMatch(/killed between the keep decision and the score/);
    expect(kept(dir, "r02-k0")).toBeNull();

    const db2 = new Database(join(dir, "hone.db"));
    db2.exec("DROP TRIGGER kill_here");
    db2.close();
    const resumed = await hone(["optimize", "--resume", dir, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(qaFinalState(dir)).toEqual(want);
  });

  it("a run an earlier version left with a decision but no score gets its score on resume", async () => {
    const dir = beforeKeep(true);
    expect(kept(dir, "r02-k0")).toBe(1);
    const resumed = await hone(["optimize", "--resume", dir, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(qaFinalState(dir)).toEqual(want);
  });
});
