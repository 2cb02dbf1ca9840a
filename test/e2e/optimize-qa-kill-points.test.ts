import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { optimize } from "../../src/loop/optimize.ts";
import { hone } from "../helpers/cli.ts";
import { ROOT, tempDir } from "../helpers/fixtures.ts";
import { qaFinalState } from "../helpers/run-state.ts";

// What a resumed round reads as done is written together with what it would otherwise never write again. A kill
// between a method's keep decision and the candidate's score once left a decided candidate without its score, and
// the resumed round skipped decided candidates (seen in CI: evoprompt-ga's r02-k0 ended with score null after kill -9
// and --resume). Here a finished run's last round is put back to where it stood at a kill point, a trigger makes one
// write there fail as a kill would, and the run is resumed twice: once into the failure, once to the end.

const DATA = join(ROOT, "test", "fixtures", "datasets");
const runs: Record<string, { dir: string; want: ReturnType<typeof qaFinalState> }> = {};
let full = "";
let want: ReturnType<typeof qaFinalState>;

beforeAll(async () => {
  const benchmark = { id: "gsm8k", train: 4, validation: 2, dataDir: DATA };
  const models = { executor: { model: "offline" }, proposer: { model: "offline" } };
  for (const method of ["evoprompt-ga", "harnessttt"]) {
    const dir = join(tempDir(), method);
    await optimize({ benchmark, ...models, rounds: 2, proposals: 2, method, cache: { mode: "off" as const } }, { outDir: dir });
    runs[method] = { dir, want: qaFinalState(dir) };
  }
  ({ dir: full, want } = runs["evoprompt-ga"] as (typeof runs)[string]);
}, 60_000);

/** A copy of the finished run (evoprompt-ga's unless `from` says), its round 2 unfinished, with `sql` run on its hone.db. */
function runAt(sql: string, from = full): string {
  const dir = join(tempDir(), "run");
  cpSync(from, dir, { recursive: true });
  withDb(dir, (db) =>
    db.exec(`DELETE FROM decisions WHERE round = 2;
      UPDATE rounds SET status = 'rolling_out', best_score = NULL, moved = 0, finished_at = NULL WHERE round = 2;
      UPDATE runs SET status = 'running', summary = NULL, finished_at = NULL;
      ${sql}`),
  );
  return dir;
}

function withDb<T>(dir: string, f: (db: Database.Database) => T): T {
  const db = new Database(join(dir, "hone.db"));
  try {
    return f(db);
  } finally {
    db.close();
  }
}

const one = (dir: string, sql: string) => withDb(dir, (db) => db.prepare(sql).get()) as Record<string, unknown> | undefined;

/** Resumes with a trigger that fails the first write it names (a kill there), then without it to the end. */
async function killThenResume(dir: string, trigger: string, check: () => void, end = want): Promise<void> {
  withDb(dir, (db) => db.exec(`CREATE TRIGGER kill_here ${trigger} BEGIN SELECT RAISE(ABORT, 'killed here'); END`));
  const killed = await hone(["optimize", "--resume", dir, "--json"]);
  expect(killed.code).not.toBe(0);
  expect(killed.stderr).toMatch(/killed here/);
  check();
  withDb(dir, (db) => db.exec("DROP TRIGGER kill_here"));
  const resumed = await hone(["optimize", "--resume", dir, "--json"]);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(qaFinalState(dir)).toEqual(end);
}

const proposerCalls = (dir: string) =>
  one(dir, "SELECT COUNT(*) AS n FROM model_calls WHERE role = 'proposer' AND round = 2")?.n as number;

describe("a QA round's writes that a resumed round reads as done are made as one", () => {
  it("the finished run has a measured, kept round-2 candidate and a proposer call for it", () => {
    expect(want.rounds).toHaveLength(3);
    expect(want.methodState.find((m) => (m as { candidate_id: string }).candidate_id === "r02-k0")).toMatchObject({ kept: 1 });
    expect(proposerCalls(full)).toBeGreaterThan(0);
  });

  it("keep decisions with their scores: a failed score write leaves no decision, and the run ends as the uninterrupted one", async () => {
    const dir = runAt(`UPDATE candidates SET score = NULL WHERE round = 2;
      UPDATE method_state SET kept = NULL, rule = NULL, reason = NULL WHERE candidate_id LIKE 'r02-%';`);
    await killThenResume(dir, "BEFORE UPDATE OF score ON candidates WHEN NEW.id = 'r02-k0'", () =>
      expect(one(dir, "SELECT kept FROM method_state WHERE candidate_id = 'r02-k0'")).toEqual({ kept: null }),
    );
  });

  it("a run an earlier version left with a decision but no score gets its score on resume", async () => {
    const dir = runAt("UPDATE candidates SET score = NULL WHERE round = 2;");
    expect(one(dir, "SELECT kept FROM method_state WHERE candidate_id = 'r02-k0'")).toEqual({ kept: 1 });
    const resumed = await hone(["optimize", "--resume", dir, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(qaFinalState(dir)).toEqual(want);
  });

  it.each(["evoprompt-ga", "harnessttt"])(
    "proposals with the proposer's calls (and a method's rows): a failed candidate write leaves none, nothing is counted twice (%s)",
    async (method) => {
      const from = runs[method] as (typeof runs)[string];
      const dir = runAt(
        `DELETE FROM task_results WHERE measurement_id IN (SELECT id FROM measurements WHERE round = 2);
        DELETE FROM measurements WHERE round = 2;
        DELETE FROM model_calls WHERE round = 2;
        DELETE FROM method_state WHERE candidate_id LIKE 'r02-%';
        DELETE FROM candidates WHERE round = 2;
        UPDATE rounds SET status = 'proposing', proposer_model = NULL, proposer_prompt = NULL, proposer_completion = NULL
          WHERE round = 2;`,
        from.dir,
      );
      // A killed attempt without the request cache may have left the slot's ref at another commit: it is replaced.
      const ref = join(dir, "harnesses.git", "refs", "candidates", "r02-k0");
      writeFileSync(ref, readFileSync(join(dir, "harnesses.git", "refs", "candidates", "r00-seed")));
      const check = () => {
        expect(proposerCalls(dir)).toBe(0);
        expect(one(dir, "SELECT COUNT(*) AS n FROM method_state WHERE candidate_id LIKE 'r02-%'")).toEqual({ n: 0 });
      };
      await killThenResume(dir, "BEFORE INSERT ON candidates WHEN NEW.round = 2", check, from.want);
      expect(proposerCalls(dir)).toBe(proposerCalls(from.dir));
      expect(readFileSync(ref, "utf8")).toBe(
        readFileSync(join(from.dir, "harnesses.git", "refs", "candidates", "r02-k0"), "utf8"),
      );
    },
  );
});
