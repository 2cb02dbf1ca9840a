import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { hone, optimizeArgs } from "../helpers/cli.ts";
import { tempDir } from "../helpers/fixtures.ts";

// The README says a method program's request holds `budget`, "what is left, in the run's unit". It used to hold the
// same number every round (the loop's total, counted as maxEvals × rounds, as if a round ran one rollout): a program
// pacing itself on it was told nothing. Now: the seed's rollout and K rollouts a round of at most maxEvals calls
// each, less what the archive's candidates spent.
function budgetMethod(): string {
  const dir = tempDir();
  writeFileSync(join(dir, "method.json"), JSON.stringify({ name: "pacer", entrypoint: "python3 m.py", timeout: 60 }));
  const program = [
    "import json, os, shutil, sys",
    "req = json.load(sys.stdin)",
    "for k in range(req['proposals']):",
    "    d = os.path.join(req['output_dir'], 'p-%d' % k)",
    "    shutil.copytree(os.path.join(req['archive_dir'], 'candidates', 'r00-seed'), d)",
    "    open(os.path.join(d, 'prompt.md'), 'a').write('\\nround %d slot %d\\n' % (req['round'], k))",
    "    json.dump({'parent': 'r00-seed', 'rationale': json.dumps(req['budget'])}, open(os.path.join(d, 'proposal.json'), 'w'))",
  ];
  writeFileSync(join(dir, "m.py"), program.join("\n"));
  return dir;
}

describe("the budget a method program is told", () => {
  it("is what is left of the run's evaluator calls, round by round", async () => {
    const out = join(tempDir(), "run");
    const r = await hone(
      optimizeArgs({
        rounds: 2,
        proposals: 2,
        maxEvals: 3,
        seed: 1,
        out,
        extra: ["--executor", "offline", "--proposer", "offline", "--method", budgetMethod()],
      }),
    );
    expect(r.code, r.stderr).toBe(0);
    const db = new Database(join(out, "hone.db"), { readonly: true });
    const told = db
      .prepare("SELECT candidate_id, rationale FROM method_state WHERE candidate_id != 'r00-seed' ORDER BY candidate_id")
      .all() as {
      candidate_id: string;
      rationale: string;
    }[];
    const spent = db
      .prepare(
        "SELECT c.round AS round, SUM(r.evals_used) AS calls FROM rollouts r JOIN candidates c ON c.id = r.candidate_id GROUP BY c.round ORDER BY c.round",
      )
      .all() as { round: number; calls: number }[];
    db.close();
    const total = 3 * (1 + 2 * 2);
    const left1 = total - (spent[0]?.calls ?? 0);
    const left2 = left1 - (spent[1]?.calls ?? 0);
    expect(left2).toBeLessThan(left1);
    expect(told.map((t) => [t.candidate_id, JSON.parse(t.rationale)])).toEqual([
      ["r01-k0", { evaluator_calls: left1 }],
      ["r01-k1", { evaluator_calls: left1 }],
      ["r02-k0", { evaluator_calls: left2 }],
      ["r02-k1", { evaluator_calls: left2 }],
    ]);
  }, 120_000);
});
